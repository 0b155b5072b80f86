"""The library: one SQLite file holding graders, datasets, runs and endpoints (and the judge cache).

Open it once per process (``Library.open``) and pass it around; the repositories hang off it.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from .database import open_engine
from .datasets import DatasetRepository
from .endpoints import EndpointRepository
from .graders import GraderRepository
from .judge_cache import JudgeCacheRepository
from .labels import LabelRepository
from .runs import RunRepository
from .suites import SuiteRepository


class Library:
    def __init__(self, engine: Engine, path: Path | None) -> None:
        self.engine = engine
        self.path = path
        self.graders = GraderRepository(engine)
        self.suites = SuiteRepository(engine, self.graders)
        self.datasets = DatasetRepository(engine)
        self.runs = RunRepository(engine)
        self.endpoints = EndpointRepository(engine)
        self.labels = LabelRepository(engine)
        self.judge_cache = JudgeCacheRepository(engine)

    @classmethod
    def open(cls, path: Path | str) -> Library:
        return cls(open_engine(path), None if str(path) == ":memory:" else Path(path))

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
