"""SQLite library through SQLAlchemy: graders with versions, datasets, runs and results."""

from .errors import Conflict, LibraryError, Locked, NotFound
from .library import Library

__all__ = ["Conflict", "Library", "LibraryError", "Locked", "NotFound"]
