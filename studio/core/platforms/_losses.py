"""What an import could not carry, said once per entry or field (nothing disappears silently).

Each importer knows which fields of an entry its grader holds; ``unmapped`` turns the rest into
one warning line each, and ``skip`` records an entry that became no grader at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from studio.core.json_types import JsonValue

from ._base import ImportResult, Skipped


def unmapped(entry: JsonValue, mapped: Iterable[str], where: str) -> list[str]:
    """One line per key of ``entry`` (a mapping) the grader does not hold."""
    if not isinstance(entry, Mapping):
        return []
    known = set(mapped)
    return [f"{where}: field {name!r} is not mapped to the studio grader (ignored)"
            for name in entry if name not in known]


def skip(result: ImportResult, where: str, kind: JsonValue, exc: Exception, line: int | None = None) -> None:
    text = str(exc).strip() or type(exc).__name__
    result.skipped.append(Skipped(where=where, kind=str(kind or "(no kind)"), reason=text, line=line))
