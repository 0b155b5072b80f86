"""The library (a SQLite file or a PostgreSQL database) through SQLAlchemy: graders with versions, datasets, runs and results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import Conflict, LibraryError, Locked, NotFound, StaleVersion

if TYPE_CHECKING:
    from .library import Library

__all__ = ["Conflict", "Library", "LibraryError", "Locked", "NotFound", "StaleVersion"]


def __getattr__(name: str) -> type[Library]:
    # Library (and SQLAlchemy under it) on first use: a lean read such as ``graders list`` can use
    # the package's small modules (location, the schema version) without paying for it
    if name == "Library":
        from .library import Library

        return Library
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
