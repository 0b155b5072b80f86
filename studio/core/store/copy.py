"""``library copy``: a whole library from one backend to another (SQLite <-> PostgreSQL).

Every table, row for row with its ids, in an order the foreign keys accept, streamed in chunks
inside one transaction of the destination (a failed copy leaves it as it was). Endpoint keys live
in the OS keyring, never in the library, so an endpoint arrives without one (docs/team.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, Table, func, insert, select, text

from studio.core.json_types import JsonObject
from studio.core.outside import json_text, loads_outside, printable, storable_text

from .database import utcnow
from .errors import Conflict
from .library import Library
from .tables import Timestamp, metadata

#: rows per insert: large enough for the server's round trips, small enough for memory
CHUNK = 2000

#: what a person is told was copied, in this order: (table, noun)
SUMMARY = (("graders", "graders"), ("grader_versions", "grader versions"), ("suites", "suites"),
           ("datasets", "datasets"), ("samples", "samples"), ("runs", "runs"), ("results", "results"),
           ("label_sets", "label sets"), ("labels", "labels"), ("endpoints", "endpoints (without keys)"))


@dataclass
class CopyReport:
    counts: dict[str, int] = field(default_factory=dict)
    #: rows carried over changed, each a sentence naming the row (``_storable_row``)
    warnings: list[str] = field(default_factory=list)

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
            report.counts[table.name] = _copy_table(reader, writer, table, progress, report.warnings)
        if writer.dialect.name == "postgresql":
            _reset_sequences(writer)
    return report


def _copy_table(reader: Connection, writer: Connection, table: Table,
                progress: Callable[[str, int], None] | None, warnings: list[str]) -> int:
    order = list(table.primary_key.columns) or list(table.columns)[:1]
    result = reader.execution_options(stream_results=True, yield_per=CHUNK).execute(
        select(table).order_by(*order))
    required_times = [c.name for c in table.columns if isinstance(c.type, Timestamp) and not c.nullable]
    json_columns = _JSON_COLUMNS.get(table.name, ())
    now = utcnow()
    count = 0
    for chunk in result.mappings().partitions(CHUNK):
        writer.execute(insert(table), [_storable_row(table.name, dict(row), required_times, json_columns, now, warnings)
                                       for row in chunk])
        count += len(chunk)
        if progress is not None:
            progress(table.name, count)
    return count


#: the columns holding JSON text, which PostgreSQL's json functions read (a ``\u0000`` breaks them)
_JSON_COLUMNS = {
    "results": ("scores", "details", "raw"), "grader_results": ("scores", "details", "raw"),
    "runs": ("settings", "aggregates", "suite"), "samples": ("data",), "datasets": ("provenance",),
    "endpoints": ("config",), "judge_cache": ("response",),
}


def _storable_row(table: str, row: JsonObject, required_times: Sequence[str], json_columns: Sequence[str],
                  now: datetime, warnings: list[str]) -> JsonObject:
    """A row of the source made storable in the destination alike on either backend (the rows of
    another library are outside values): text through ``outside.storable_text``, JSON text
    through ``outside.json_text``, and a required time the source could not read (SQLite text
    that is no time) carried as the copy's time, each change named in ``warnings``."""
    for column, value in row.items():
        if type(value) is str:
            stored = storable_text(value)
            if column in json_columns and "\\u0000" in stored:
                with contextlib.suppress(ValueError):
                    stored = json_text(loads_outside(stored))
            if stored != value:
                row[column] = stored
                warnings.append(f"{table} row {_row_id(row)}: {column} held characters no library stores alike"
                                " (NUL, a lone surrogate): copied with U+FFFD in their place")
    for column in required_times:
        if row.get(column) is None:
            row[column] = now
            warnings.append(f"{table} row {_row_id(row)}: {column} is not a time the source library can read:"
                            " copied as the time of this copy")
    return row


def _row_id(row: JsonObject) -> str:
    for key in ("id", "key", "name", "run_id"):
        if row.get(key) is not None:
            return printable(str(row[key]))
    return "?"


def _reset_sequences(writer: Connection) -> None:
    """Rows came with their ids: the serial columns' sequences move past them."""
    for table in metadata.sorted_tables:
        if "id" not in table.c or not table.c.id.primary_key:
            continue
        writer.execute(text(
            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), coalesce(max(id), 1), max(id) IS NOT NULL)"
            f" FROM {table.name}"))
