"""A row of a library that does not validate: a teammate's write, an older or newer studio's, a hand edit.

The library is shared (a PostgreSQL library several people write) and every row read from it is an
outside value: it is validated on read, and one that does not validate becomes a ``BrokenRow``
instead of an exception. Lists show it as broken (named, with its id, its author and how to repair
or delete it) while everything else keeps working; reading that one row for use is a
``BrokenRowError``: a sentence, never a traceback (docs/security.md, "Rows read from a library").
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from studio.core.errors import StudioError
from studio.core.outside import printable


@dataclass(frozen=True)
class BrokenRow:
    """What a person is told about a row that does not validate."""

    #: what the row is, as people call it ("endpoint", "grader version")
    what: str
    #: the id people name it by (an endpoint's name, ``key vN``), as stored (``sentence`` shows it printable)
    ident: str
    #: who last wrote it (the library's author column), "" when it records none
    author: str
    #: why it does not validate: one line
    reason: str
    #: how to delete or repair it (a command, or the window's action)
    repair: str
    #: what a delete takes to remove it (a grader version's grader key), when not ``ident``
    key: str = ""

    @property
    def handle(self) -> str:
        return self.key or self.ident

    def sentence(self) -> str:
        by = f" (written by {printable(self.author)})" if self.author else ""
        return printable(f"the {self.what} “{self.ident}”{by} stored in this library is broken: {self.reason}; "
                         f"{self.repair}")


class BrokenRowError(StudioError):
    """A broken row read for use (a run naming that endpoint, ``graders show`` of that version)."""

    exit_code = 2

    def __init__(self, row: BrokenRow) -> None:
        super().__init__(row.sentence())
        self.row = row


def reason_of(exc: Exception) -> str:
    """One printable line saying why a stored value does not validate (the first of pydantic's
    errors, with its field: a teammate's row can hold a thousand)."""
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        where = ".".join(str(part) for part in first.get("loc", ()))
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        text = (f"{where}: " if where else "") + f"{first.get('msg', '')}{more}"
    else:
        text = str(exc) or type(exc).__name__
    return printable(" ".join(text.split()))[:300]
