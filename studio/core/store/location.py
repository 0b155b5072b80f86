"""Where the library lives: --db, then $GRADER_STUDIO_DB, then the user data directory.

A library is a SQLite file (a path) or a shared PostgreSQL database (a ``postgresql://`` URL,
docs/team.md). A string with a scheme before any ``/`` (``mysql://``, ``postgres:/``, ``file:``,
``C:\\x`` off Windows) is a URL: one the studio does not read is refused in one sentence, never
opened as a file named after it. A URL may carry a password: it is kept in memory only and shown
masked (``studio.core.urls.masked``, the one function every surface calls).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from studio.core.urls import (
    ACCEPTED,
    SERVER_SCHEMES,
    UrlProblem,
    is_server_url,
    masked,
    parse_server_url,
    scheme_of,
)

from .errors import LibraryUnreachable

__all__ = ["ENV_VAR", "SERVER_SCHEMES", "BadLocation", "Location", "checked", "default_path", "display",
           "is_server_url", "resolve_db", "resolve_db_path", "short_name"]

ENV_VAR = "GRADER_STUDIO_DB"

#: a library: a SQLite file's path, or a server URL (a str)
Location = Path | str


class BadLocation(LibraryUnreachable):
    """A library location that is a URL the studio does not read (an unknown or misspelled scheme,
    a malformed server URL): one sentence, exit 2, nothing opened or created."""


def checked(value: str) -> Location:
    """``value`` as a library location: a server URL (a str, checked here) or a path; refuses any
    other URL (``BadLocation``), whose sentence names the accepted forms and no secret."""
    scheme = scheme_of(value)
    if scheme is None:
        return Path(value).expanduser()
    if is_server_url(value):
        try:
            parse_server_url(value)
        except UrlProblem as exc:
            raise BadLocation(str(exc)) from None
        return value
    raise BadLocation(f"'{scheme}:' is not a library location the studio reads: it reads {ACCEPTED} "
                      "(a file whose name has a colon is written ./NAME)")


def resolve_db(explicit: str | os.PathLike[str] | None = None) -> Location:
    """The library to open: a server URL stays a str, a path becomes a Path, any other URL is refused."""
    if isinstance(explicit, Path):
        return explicit
    value = os.fspath(explicit) if explicit else os.environ.get(ENV_VAR)
    if value:
        return checked(value)
    return default_path()


def default_path() -> Path:
    """The library file of a user who names none (the user data directory)."""
    return Path(platformdirs.user_data_dir("grader-studio", appauthor=False)) / "library.sqlite"


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Location:
    """``resolve_db`` under its older name (the CLI's lean listing and the window call it)."""
    return resolve_db(explicit)


def display(location: Location) -> str:
    """How a library is named to a person: a path, or a URL with its password masked."""
    return masked(location)


def short_name(location: Location) -> str:
    """The window title's name of a library: the file's name, or the database's (no user, no password)."""
    if is_server_url(location):
        try:
            parts = parse_server_url(str(location))
        except UrlProblem:
            return masked(location)
        return f"{parts.database or 'postgres'} on {parts.host or 'localhost'}"
    return Path(location).name
