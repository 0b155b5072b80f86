"""The library: graders, datasets, runs and endpoints (and the judge cache) in one SQLite file or
one PostgreSQL database shared by a team (docs/team.md).

Open it once per process (``Library.open``) and pass it around; the repositories hang off it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from .authors import use_server_role
from .database import open_engine
from .datasets import DatasetRepository
from .endpoints import EndpointRepository
from .graders import GraderRepository
from .judge_cache import JudgeCacheRepository
from .location import Location, checked, display, is_server_url
from .runs import RunRepository
from .suites import SuiteRepository

if TYPE_CHECKING:
    from .labels import LabelRepository
    from .queues import QueueRepository


class Library:
    def __init__(self, engine: Engine, path: Path | None, url: str | None = None) -> None:
        self.engine = engine
        #: the SQLite file (None in memory and on a server)
        self.path = path
        #: the server URL as given (it may hold a password: pass it on, never show it; ``where``)
        self.url = url
        #: the database role a server library connected as (the author of its writes: authors.py)
        self.role: str | None = None
        self.graders = GraderRepository(engine)
        self.suites = SuiteRepository(engine, self.graders)
        self.datasets = DatasetRepository(engine)
        self.runs = RunRepository(engine)
        self.endpoints = EndpointRepository(engine)
        self.judge_cache = JudgeCacheRepository(engine)

    # the labels and the review queues (issue 48), imported on first use: a run never reads them
    # before its first call (bench/README.md, section 10)
    @functools.cached_property
    def labels(self) -> LabelRepository:
        from .labels import LabelRepository

        return LabelRepository(self.engine)

    @functools.cached_property
    def queues(self) -> QueueRepository:
        from .queues import QueueRepository

        return QueueRepository(self.engine)

    @classmethod
    def open(cls, location: Location) -> Library:
        """Open (and migrate) a library file, creating it when new, or a server's database (which
        must exist: the studio never creates databases or roles). A string that is a URL the
        studio does not read is refused (``BadLocation``), never created as a file."""
        if isinstance(location, str):
            location = checked(location)
        if is_server_url(location):
            library = cls(open_engine(location), None, str(location))
            with library.engine.connect() as conn:
                library.role = str(conn.exec_driver_sql("SELECT current_user").scalar())
            use_server_role(library.role)
            return library
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
        if self.role is not None:
            use_server_role(None, closing=self.role)
        self.engine.dispose()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
