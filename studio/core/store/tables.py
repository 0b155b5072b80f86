"""SQLAlchemy Core tables of the library; the Alembic revisions (``store/revisions``) create and evolve them.

Core, not the ORM: the hot paths (results written in batches of hundreds, a results grid paging a
million rows) want plain statements, and the repositories return pydantic models anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import cast

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    Row,
    String,
    Table,
    Text,
    TypeDecorator,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.types import TypeEngine

from studio.core.json_types import JsonObject

from .ledger import GraderRow, ResultRow, column_specs

#: a row of one of these tables as a whole-table ``select`` returns it: its columns are read by name
#: and checked by the repository's pydantic model, so their types are not spelled here
TableRow = Row[*tuple[object, ...]]


class _SqliteTime(sqlite.DATETIME):
    """SQLite's DATETIME read leniently: SQLite stores a time as text, and a teammate's or a hand
    edit's text that is no time ('yesterday') reads as None (unknown) instead of a ValueError that
    took down every list holding the row. A model that needs the time then refuses the row, which
    its reader shows as broken (models/broken.py); PostgreSQL's timestamp type refuses such a
    write in the first place."""

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[object], datetime | None] | None:
        parse = super().result_processor(dialect, coltype)
        if parse is None:
            return None

        def read(value: object) -> datetime | None:
            try:
                return cast(datetime | None, parse(value))
            except (ValueError, TypeError):
                return None

        return read


class Timestamp(TypeDecorator[datetime]):
    """A library's time column: DateTime, read leniently on SQLite (``_SqliteTime``)."""

    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[datetime]:
        if dialect.name == "sqlite":  # SQLAlchemy's SQLite DATETIME takes untyped *args, **kwargs
            return dialect.type_descriptor(_SqliteTime())  # type: ignore[no-untyped-call]
        return dialect.type_descriptor(DateTime())


metadata = MetaData()

graders = Table(
    "graders",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("key", String, nullable=False, unique=True),
    Column("kind", String, nullable=False),
    Column("name", String, nullable=False, default=""),
    Column("locked", Boolean, nullable=False, default=False),
    Column("locked_by", String, nullable=True),
    Column("locked_at", Timestamp, nullable=True),
    Column("deleted_at", Timestamp, nullable=True),
    Column("current_version", Integer, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
)

grader_versions = Table(
    "grader_versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("grader_id", Integer, ForeignKey("graders.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("action", String, nullable=False),
    Column("definition", Text, nullable=False),
    Column("message", Text, nullable=False, default=""),
    Column("created_at", Timestamp, nullable=False),
    Column("author", String, nullable=False, default=""),
)

datasets = Table(
    "datasets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String, nullable=False, unique=True),
    Column("format", String, nullable=False),
    Column("source", Text, nullable=False, default=""),
    Column("sample_count", Integer, nullable=False, default=0),
    Column("deleted_at", Timestamp, nullable=True),
    Column("created_at", Timestamp, nullable=False),
    Column("provenance", Text, nullable=True),
    Column("author", String, nullable=False, default=""),
)

samples = Table(
    "samples",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("sample_id", String, nullable=False),
    Column("input_text", Text, nullable=False, default=""),
    Column("completion", Text, nullable=True),
    Column("expected", Text, nullable=True),
    Column("data", Text, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("grader_id", Integer, ForeignKey("graders.id"), nullable=False),
    Column("grader_version", Integer, nullable=False),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("status", String, nullable=False),
    Column("endpoint", String, nullable=True),
    Column("total", Integer, nullable=False, default=0),
    Column("settings", Text, nullable=False, default="{}"),
    Column("aggregates", Text, nullable=False, default="{}"),
    Column("error", Text, nullable=True),
    Column("created_at", Timestamp, nullable=False),
    Column("finished_at", Timestamp, nullable=True),
    Column("owner_pid", Integer, nullable=True),
    #: a suite run's plan (JSON: suite key and version or null for a one-off, the overall rule)
    Column("suite", Text, nullable=True),
    Column("author", String, nullable=False, default=""),
)

_TYPES: JsonObject = {"Integer": Integer, "Float": Float, "String": String, "Text": Text}


def _row_columns(row: type[tuple[object, ...]], skip: int) -> list[Column[object]]:
    """The table's columns of a result row's declaration (ledger.py ``column_specs``)."""
    return [Column(name, _TYPES[kind], nullable=nullable) if default is None
            else Column(name, _TYPES[kind], nullable=nullable, default=default)
            for name, kind, nullable, default in column_specs(row, skip)]


results = Table(
    "results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),
    *_row_columns(ResultRow, 1),  # store/ledger.py: the row declared once
)


endpoints = Table(
    "endpoints",
    metadata,
    Column("name", String, primary_key=True),
    Column("config", Text, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
    Column("updated_by", String, nullable=False, default=""),
)

judge_cache = Table(
    "judge_cache",
    metadata,
    Column("key", String, primary_key=True),
    Column("response", Text, nullable=False),
    Column("created_at", Timestamp, nullable=False),
)

label_sets = Table(
    "label_sets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("key", String, nullable=False),
    Column("scale_min", Float, nullable=True),
    Column("scale_max", Float, nullable=True),
    Column("created_at", Timestamp, nullable=False),
)

labels = Table(
    "labels",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("label_set_id", Integer, ForeignKey("label_sets.id"), nullable=False),
    Column("sample_id", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("verdict", String, nullable=True),
    Column("score", Float, nullable=True),
    Column("note", Text, nullable=False, default=""),
    Column("labeler", String, nullable=False, default=""),
    Column("created_at", Timestamp, nullable=False),
)

probe_reports = Table(
    "probe_reports",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("grader_key", String, nullable=False),
    Column("grader_version", Integer, nullable=False),
    Column("dataset", String, nullable=False),
    Column("endpoint", String, nullable=True),
    Column("report", Text, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("author", String, nullable=False, default=""),
)

suites = Table(
    "suites",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("key", String, nullable=False, unique=True),
    Column("name", String, nullable=False, default=""),
    Column("locked", Boolean, nullable=False, default=False),
    Column("locked_by", String, nullable=True),
    Column("locked_at", Timestamp, nullable=True),
    Column("deleted_at", Timestamp, nullable=True),
    Column("current_version", Integer, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
)

suite_versions = Table(
    "suite_versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("suite_id", Integer, ForeignKey("suites.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("action", String, nullable=False),
    Column("definition", Text, nullable=False),
    Column("message", Text, nullable=False, default=""),
    Column("created_at", Timestamp, nullable=False),
    Column("author", String, nullable=False, default=""),
)

run_graders = Table(
    "run_graders",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("slot", Integer, primary_key=True),
    Column("grader_id", Integer, ForeignKey("graders.id"), nullable=False),
    Column("grader_key", String, nullable=False),
    Column("grader_version", Integer, nullable=False),
    Column("weight", Float, nullable=False, default=1.0),
    Column("threshold", Float, nullable=True),
)

grader_results = Table(
    "grader_results",
    metadata,
    Column("run_id", Integer, primary_key=True),
    Column("slot", Integer, primary_key=True),
    Column("sample_idx", Integer, primary_key=True),
    *_row_columns(GraderRow, 3),
)

# --- review queues (issue 48; store/queues.py) ------------------------------------------------------
review_queues = Table(
    "review_queues",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String, nullable=False, unique=True),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("runs", Text, nullable=False, default="[]"),  # JSON: the run ids the samples come from
    Column("rule", Text, nullable=False, default="{}"),  # JSON: how the samples were chosen
    Column("labels_wanted", Integer, nullable=False, default=1),
    Column("assignees", Text, nullable=False, default="[]"),  # JSON: reviewers ([]: everyone)
    Column("leads", Text, nullable=False, default="[]"),  # JSON: who may settle a sample
    Column("derived", Text, nullable=False, default="[]"),  # JSON: judge versions and datasets made from it
    Column("created_at", Timestamp, nullable=False),
    Column("author", String, nullable=False, default=""),
)

queue_samples = Table(
    "queue_samples",
    metadata,
    Column("queue_id", Integer, ForeignKey("review_queues.id"), primary_key=True),
    Column("sample_id", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("reason", Text, nullable=False, default=""),
)

queue_labels = Table(
    "queue_labels",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("queue_id", Integer, ForeignKey("review_queues.id"), nullable=False),
    Column("sample_id", String, nullable=False),
    Column("reviewer", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("verdict", String, nullable=True),  # None: the reviewer cleared their label
    Column("note", Text, nullable=False, default=""),
    Column("created_at", Timestamp, nullable=False),
)

queue_settlements = Table(
    "queue_settlements",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("queue_id", Integer, ForeignKey("review_queues.id"), nullable=False),
    Column("sample_id", String, nullable=False),
    Column("author", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("verdict", String, nullable=True),  # None: the settlement withdrawn
    Column("note", Text, nullable=False, default=""),
    Column("created_at", Timestamp, nullable=False),
)
