"""Refusals of the library, each a sentence a person can act on (the CLI exits 1, the window shows it)."""

from __future__ import annotations

from collections.abc import Iterable

from studio.core.errors import StudioError
from studio.core.near_names import did_you_mean


class LibraryError(StudioError):
    """Base of every refusal by the library."""


class NotFound(LibraryError):
    pass


class Locked(LibraryError):
    pass


class Conflict(LibraryError):
    pass


class LibraryUnreachable(LibraryError):
    """The library's server cannot be reached or refuses us, or its URL is unreadable: nothing was
    opened or created (the CLI exits 2)."""

    exit_code = 2


class NotALibrary(LibraryError):
    """The library file is something else: a folder or a device, not a SQLite file, a damaged or cut
    one, or another program's database (which the studio must not add its tables to). Nothing was
    changed (the CLI exits 2)."""

    exit_code = 2


class StaleVersion(Conflict):
    """A save based on a version that is no longer the stored head (another analyst saved since)."""

    def __init__(self, noun: str, key: str, base: int, head: int, author: str, at: object) -> None:
        from datetime import datetime

        moment = at.strftime("%Y-%m-%d %H:%M UTC") if isinstance(at, datetime) else "since"
        by = f" by {author}" if author else ""
        super().__init__(
            f"{noun} {key!r} changed since you opened v{base}: v{head}{by} ({moment}) is stored now; "
            f"compare v{base} and v{head} side by side (versions diff) and save again from v{head}")
        self.key, self.base, self.head, self.author = key, base, head, author


class EndpointNotFound(NotFound):
    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        near = did_you_mean(name, known)
        super().__init__(f"no endpoint named {name!r}{near}" + (
            " (or add one with `grader-studio endpoints add`)" if near else
            "; add one with `grader-studio endpoints add`"))
        self.name = name


class NoEndpoint(LibraryError):
    """A judge has no endpoint: neither the definition, the run, nor a single library endpoint."""
