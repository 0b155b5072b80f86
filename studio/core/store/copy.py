"""``library copy``: a whole library from one backend to another (SQLite <-> PostgreSQL).

Every table, row for row with its ids, in an order the foreign keys accept, streamed in chunks
inside one transaction of the destination (a failed copy leaves it as it was). Endpoint keys live
in the OS keyring, never in the library, so an endpoint arrives without one (docs/team.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Table, func, insert, select, text

from .errors import Conflict
from .library import Library
from .tables import metadata

#: rows per insert: large enough for the server's round trips, small enough for memory
CHUNK = 2000

#: what a person is told was copied, in this order: (table, noun)
SUMMARY = (("graders", "graders"), ("grader_versions", "grader versions"), ("suites", "suites"),
           ("datasets", "datasets"), ("samples", "samples"), ("runs", "runs"), ("results", "results"),
           ("label_sets", "label sets"), ("labels", "labels"), ("endpoints", "endpoints (without keys)"))


@dataclass
class CopyReport:
    counts: dict[str, int] = field(default_factory=dict)

    def sentence(self) -> str:
        parts = [f"{self.counts.get(table, 0):,} {noun}" for table, noun in SUMMARY]
        return ", ".join(parts)


def is_empty(library: Library) -> bool:
    with library.engine.connect() as conn:
        for table in ("graders", "suites", "datasets", "runs", "endpoints"):
            if conn.execute(select(func.count()).select_from(metadata.tables[table])).scalar_one():
                return False
    return True


def copy_library(source: Library, target: Library,
                 progress: Callable[[str, int], None] | None = None) -> CopyReport:
    """Copy everything in ``source`` into the empty ``target``; refuses a target holding anything."""
    if not is_empty(target):
        raise Conflict(f"the library at {target.where} is not empty: copy into a new library "
                       "(a new file, or an empty database)")
    report = CopyReport()
    with source.engine.connect() as reader, target.engine.begin() as writer:
        for table in metadata.sorted_tables:
            report.counts[table.name] = _copy_table(reader, writer, table, progress)
        if writer.dialect.name == "postgresql":
            _reset_sequences(writer)
    return report


def _copy_table(reader, writer, table: Table, progress) -> int:  # type: ignore[no-untyped-def]
    order = list(table.primary_key.columns) or list(table.columns)[:1]
    result = reader.execution_options(stream_results=True, yield_per=CHUNK).execute(
        select(table).order_by(*order))
    count = 0
    for chunk in result.mappings().partitions(CHUNK):
        writer.execute(insert(table), [dict(row) for row in chunk])
        count += len(chunk)
        if progress is not None:
            progress(table.name, count)
    return count


def _reset_sequences(writer) -> None:  # type: ignore[no-untyped-def]
    """Rows came with their ids: the serial columns' sequences move past them."""
    for table in metadata.sorted_tables:
        if "id" not in table.c or not table.c.id.primary_key:
            continue
        writer.execute(text(
            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), coalesce(max(id), 1), max(id) IS NOT NULL)"
            f" FROM {table.name}"))
