"""The grader repository: live graders unique by key, immutable versions, locks and tombstones.

One row per key for its whole life: deleting sets a tombstone, creating the key again (Adaptive's
"delete and recreate") clears it and appends a version, so the history of a key is never split or lost.
"""

from __future__ import annotations

import difflib
import json
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Engine, Row, func, insert, select, update

from studio.core.models import GraderDefinition, dump_grader, parse_grader
from studio.core.models.files import to_yaml

from .database import utcnow
from .errors import Conflict, Locked, NotFound
from .tables import grader_versions, graders


class GraderRecord(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: int
    key: str
    kind: str
    name: str
    locked: bool
    deleted_at: datetime | None
    current_version: int
    created_at: datetime
    updated_at: datetime
    definition: GraderDefinition

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


class VersionRecord(BaseModel):
    version: int
    action: str
    message: str
    created_at: datetime
    definition: GraderDefinition


def _serialise(definition: GraderDefinition) -> str:
    return json.dumps(dump_grader(definition), sort_keys=True, ensure_ascii=False)


class GraderRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    # -- reading -------------------------------------------------------------------------------
    def _row(self, conn, key: str):  # type: ignore[no-untyped-def]
        return conn.execute(select(graders).where(graders.c.key == key)).first()

    def _record(self, conn, row: Row) -> GraderRecord:  # type: ignore[no-untyped-def]
        text = conn.execute(
            select(grader_versions.c.definition).where(
                grader_versions.c.grader_id == row.id,
                grader_versions.c.version == row.current_version,
            )
        ).scalar_one()
        return GraderRecord(**row._asdict(), definition=parse_grader(json.loads(text)))

    def list(self, *, include_deleted: bool = False, deleted_only: bool = False) -> list[GraderRecord]:
        """One query, each grader joined with its current version (the sidebar refreshes often)."""
        query = (
            select(graders, grader_versions.c.definition)
            .join(grader_versions, (grader_versions.c.grader_id == graders.c.id)
                  & (grader_versions.c.version == graders.c.current_version))
            .order_by(graders.c.kind, graders.c.key)
        )
        if deleted_only:
            query = query.where(graders.c.deleted_at.is_not(None))
        elif not include_deleted:
            query = query.where(graders.c.deleted_at.is_(None))
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        records = []
        for row in rows:
            fields = row._asdict()
            text = fields.pop("definition")
            records.append(GraderRecord(**fields, definition=parse_grader(json.loads(text))))
        return records

    def get(self, key: str, *, include_deleted: bool = False) -> GraderRecord:
        with self._engine.connect() as conn:
            row = self._row(conn, key)
            if row is None or (row.deleted_at is not None and not include_deleted):
                hint = " (it is in the trash: restore it first)" if row is not None else ""
                raise NotFound(f"no grader with key {key!r}{hint}")
            return self._record(conn, row)

    def versions(self, key: str) -> list[VersionRecord]:
        with self._engine.connect() as conn:
            row = self._row(conn, key)
            if row is None:
                raise NotFound(f"no grader with key {key!r}")
            rows = conn.execute(
                select(grader_versions)
                .where(grader_versions.c.grader_id == row.id)
                .order_by(grader_versions.c.version)
            )
            return [
                VersionRecord(
                    version=r.version,
                    action=r.action,
                    message=r.message,
                    created_at=r.created_at,
                    definition=parse_grader(json.loads(r.definition)),
                )
                for r in rows
            ]

    def version(self, key: str, number: int) -> VersionRecord:
        for record in self.versions(key):
            if record.version == number:
                return record
        raise NotFound(f"grader {key!r} has no version {number}")

    def diff(self, key: str, old: int, new: int) -> str:
        """Unified diff of two versions' YAML files: what a person reviews."""
        a, b = self.version(key, old), self.version(key, new)
        return "".join(
            difflib.unified_diff(
                to_yaml(a.definition).splitlines(keepends=True),
                to_yaml(b.definition).splitlines(keepends=True),
                fromfile=f"{key} v{old}",
                tofile=f"{key} v{new}",
            )
        )

    # -- writing -------------------------------------------------------------------------------
    def _append_version(self, conn, grader_id: int, version: int, action: str,  # type: ignore[no-untyped-def]
                        definition: GraderDefinition, message: str) -> None:
        conn.execute(
            insert(grader_versions).values(
                grader_id=grader_id,
                version=version,
                action=action,
                definition=_serialise(definition),
                message=message,
                created_at=utcnow(),
            )
        )

    def plan_create(self, key: str) -> tuple[str, str | None]:
        """What ``create`` would do with ``key``: ("create" | "recreate" | "refuse", the refusal)."""
        with self._engine.connect() as conn:
            row = self._row(conn, key)
        if row is None:
            return "create", None
        if row.deleted_at is not None:
            return "recreate", None
        return "refuse", _exists(key)

    def create(self, definition: GraderDefinition, message: str = "") -> GraderRecord:
        """Create a grader; a key in the trash is recreated (its history continues)."""
        now = utcnow()
        with self._engine.begin() as conn:
            row = self._row(conn, definition.key)
            if row is not None and row.deleted_at is None:
                raise Conflict(_exists(definition.key))
            if row is None:
                grader_id = conn.execute(
                    insert(graders).values(
                        key=definition.key, kind=definition.kind, name=definition.name,
                        locked=False, deleted_at=None, current_version=1,
                        created_at=now, updated_at=now,
                    )
                ).inserted_primary_key[0]
                self._append_version(conn, grader_id, 1, "create", definition, message)
            else:
                version = row.current_version + 1
                conn.execute(
                    update(graders).where(graders.c.id == row.id).values(
                        kind=definition.kind, name=definition.name, locked=False,
                        deleted_at=None, current_version=version, updated_at=now,
                    )
                )
                self._append_version(conn, row.id, version, "recreate", definition, message)
        return self.get(definition.key)

    def save(self, definition: GraderDefinition, message: str = "") -> GraderRecord:
        """Store an edit as a new version; an unchanged definition adds nothing."""
        with self._engine.begin() as conn:
            row = self._live_row(conn, definition.key)
            if row.locked:
                raise Locked(f"grader {definition.key!r} is locked: unlock it to edit")
            current = self._record(conn, row).definition
            if _serialise(current) == _serialise(definition):
                return self._record(conn, row)
            version = row.current_version + 1
            conn.execute(
                update(graders).where(graders.c.id == row.id).values(
                    kind=definition.kind, name=definition.name,
                    current_version=version, updated_at=utcnow(),
                )
            )
            self._append_version(conn, row.id, version, "save", definition, message)
        return self.get(definition.key)

    def restore_version(self, key: str, number: int) -> GraderRecord:
        """Make an old version current again, as a new version (history only grows)."""
        old = self.version(key, number)
        return self.save(old.definition, message=f"restored from v{number}")

    def _live_row(self, conn, key: str):  # type: ignore[no-untyped-def]
        row = self._row(conn, key)
        if row is None:
            raise NotFound(f"no grader with key {key!r}")
        if row.deleted_at is not None:
            raise NotFound(f"grader {key!r} is in the trash: restore it first")
        return row

    def delete(self, key: str) -> None:
        with self._engine.begin() as conn:
            row = self._live_row(conn, key)
            if row.locked:
                raise Locked(f"grader {key!r} is locked: unlock it before deleting it")
            now = utcnow()
            conn.execute(update(graders).where(graders.c.id == row.id).values(deleted_at=now, updated_at=now))

    def restore(self, key: str) -> GraderRecord:
        with self._engine.begin() as conn:
            row = self._row(conn, key)
            if row is None:
                raise NotFound(f"no grader with key {key!r}")
            if row.deleted_at is None:
                raise Conflict(f"grader {key!r} is not deleted")
            conn.execute(update(graders).where(graders.c.id == row.id).values(deleted_at=None, updated_at=utcnow()))
        return self.get(key)

    def set_locked(self, key: str, locked: bool) -> GraderRecord:
        with self._engine.begin() as conn:
            row = self._live_row(conn, key)
            conn.execute(update(graders).where(graders.c.id == row.id).values(locked=locked, updated_at=utcnow()))
        return self.get(key)

    def count(self) -> int:
        with self._engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(graders).where(graders.c.deleted_at.is_(None))).scalar_one()


def _exists(key: str) -> str:
    return (f"a grader with key {key!r} already exists; save a new version of it, or delete it first "
            "to recreate it")
