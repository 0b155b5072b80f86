"""The library: graders, datasets, runs and endpoints (and the judge cache) in one SQLite file or
one PostgreSQL database shared by a team (docs/team.md).

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
from .location import Location, display, is_server_url
from .runs import RunRepository
from .suites import SuiteRepository


class Library:
    def __init__(self, engine: Engine, path: Path | None, url: str | None = None) -> None:
        self.engine = engine
        #: the SQLite file (None in memory and on a server)
        self.path = path
        #: the server URL as given (it may hold a password: pass it on, never show it; ``where``)
        self.url = url
        self.graders = GraderRepository(engine)
        self.suites = SuiteRepository(engine, self.graders)
        self.datasets = DatasetRepository(engine)
        self.runs = RunRepository(engine)
        self.endpoints = EndpointRepository(engine)
        self.labels = LabelRepository(engine)
        self.judge_cache = JudgeCacheRepository(engine)

    @classmethod
    def open(cls, location: Location) -> Library:
        """Open (and migrate) a library file, creating it when new, or a server's database (which
        must exist: the studio never creates databases or roles)."""
        if is_server_url(location):
            return cls(open_engine(location), None, str(location))
        return cls(open_engine(location), None if str(location) == ":memory:" else Path(location))

    @property
    def location(self) -> Location | None:
        """What ``open`` was given: to open the same library in another process."""
        return self.url if self.url is not None else self.path

    @property
    def where(self) -> str:
        """The library as a person reads it (a URL without its password)."""
        return display(self.url) if self.url is not None else str(self.path or ":memory:")

    @property
    def is_server(self) -> bool:
        return self.url is not None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
