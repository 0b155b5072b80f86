"""Where the library lives: --db, then $GRADER_STUDIO_DB, then the user data directory.

A library is a SQLite file (a path) or a shared PostgreSQL database (a ``postgresql://`` URL,
docs/team.md). A URL may carry a password; it is kept in memory only and shown without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_VAR = "GRADER_STUDIO_DB"

#: the URL schemes that name a PostgreSQL server (psycopg 3 through SQLAlchemy)
SERVER_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")

#: a library: a SQLite file's path, or a server URL (a str)
Location = Path | str


def is_server_url(value: object) -> bool:
    return isinstance(value, str) and value.lower().startswith(SERVER_SCHEMES)


def resolve_db(explicit: str | os.PathLike[str] | None = None) -> Location:
    """The library to open: a server URL stays a str, anything else is a file path."""
    value = os.fspath(explicit) if explicit else os.environ.get(ENV_VAR)
    if value:
        return value if is_server_url(value) else Path(value).expanduser()
    return default_path()


def default_path() -> Path:
    """The library file of a user who names none (the user data directory)."""
    return Path(platformdirs.user_data_dir("grader-studio", appauthor=False)) / "library.sqlite"


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Location:
    """``resolve_db`` under its older name (the CLI's lean listing and the window call it)."""
    return resolve_db(explicit)


def display(location: Location) -> str:
    """How a library is named to a person: a path, or a URL without its password."""
    if not is_server_url(location):
        return str(location)
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(str(location))
    if parts.password is None:
        return str(location)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def short_name(location: Location) -> str:
    """The window title's name of a library: the file's name, or the database's."""
    if is_server_url(location):
        from urllib.parse import urlsplit

        parts = urlsplit(str(location))
        return f"{parts.path.lstrip('/') or 'postgres'} on {parts.hostname or 'localhost'}"
    return Path(location).name
