"""Refusals of the library, each a sentence a person can act on (the CLI exits 1, the window shows it)."""

from __future__ import annotations


class LibraryError(Exception):
    """Base of every refusal by the library."""


class NotFound(LibraryError):
    pass


class Locked(LibraryError):
    pass


class Conflict(LibraryError):
    pass
