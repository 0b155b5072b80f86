"""Stored bias-probe reports: what `grader-studio probe` measured, for the judge's report card.

Why stored: a probe makes several judge calls per sample; the window shows the newest report of
a judge without paying for them again, whichever face (CLI or window) ran it.
"""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import Engine, insert, select

from studio.core.json_types import JsonObject

from .authors import current_user
from .database import inserted_id, utcnow
from .tables import probe_reports


class ProbeRecord(BaseModel):
    id: int
    grader_key: str
    grader_version: int
    dataset: str
    endpoint: str | None
    report: JsonObject
    created_at: datetime | None


class ProbeReportRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def save(self, grader_key: str, grader_version: int, dataset: str, endpoint: str | None,
             report: JsonObject) -> int:
        with self._engine.begin() as conn:
            result = conn.execute(insert(probe_reports).values(
                grader_key=grader_key, grader_version=grader_version, dataset=dataset, endpoint=endpoint,
                report=json.dumps(report, ensure_ascii=False), created_at=utcnow(), author=current_user()))
        return inserted_id(result)

    def latest(self, grader_key: str) -> ProbeRecord | None:
        """The newest report of a judge (any dataset), or None when it was never probed."""
        with self._engine.connect() as conn:
            row = conn.execute(select(probe_reports).where(probe_reports.c.grader_key == grader_key)
                               .order_by(probe_reports.c.id.desc()).limit(1)).first()
        if row is None:
            return None
        data = row._asdict()
        data["report"] = json.loads(data["report"])
        return ProbeRecord(**data)
