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


class EndpointNotFound(NotFound):
    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        near = did_you_mean(name, known)
        super().__init__(f"no endpoint named {name!r}{near}" + (
            " (or add one with `grader-studio endpoints add`)" if near else
            "; add one with `grader-studio endpoints add`"))
        self.name = name


class NoEndpoint(LibraryError):
    """A judge has no endpoint: neither the definition, the run, nor a single library endpoint."""
