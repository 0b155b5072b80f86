"""The dataset repository: named sample sets, imported in one transaction, tombstoned on delete."""

from __future__ import annotations

import builtins
import gc
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial

from pydantic import BaseModel, field_validator
from sqlalchemy import Connection, Engine, delete, func, insert, select, update
from sqlalchemy.exc import DBAPIError

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import Sample, SampleRow
from studio.core.models.broken import BrokenRow, BrokenRowError, reason_of
from studio.core.near_names import did_you_mean

from .authors import current_user
from .database import inserted_id, sqlite_connection, utcnow
from .errors import Conflict, NotFound
from .run_inputs import paged_samples
from .tables import datasets, samples

_INSERT_CHUNK = 2000


class DatasetRecord(BaseModel):
    id: int
    name: str
    format: str
    source: str
    sample_count: int
    deleted_at: datetime | None
    #: None: the library holds a time that is no time (a hand edit of a SQLite file): unknown
    created_at: datetime | None
    #: where a generated dataset's completions came from (engine/generate.py); None when imported,
    #: or when what the library holds is not a JSON object (it only informs: the dataset still reads)
    provenance: JsonObject | None = None
    #: who imported it ("" when the library records none)
    author: str = ""

    @field_validator("provenance", mode="before")
    @classmethod
    def _parse_provenance(cls, value: JsonValue) -> JsonValue:
        try:
            parsed = json.loads(value) if isinstance(value, str) else value
        except (ValueError, RecursionError):
            return None
        return parsed if parsed is None or isinstance(parsed, dict) else None


_INSERT_SAMPLE = (
    "INSERT INTO samples (dataset_id, idx, sample_id, input_text, completion, expected, data)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _sample_row(dataset_id: int, idx: int, sample: Sample) -> tuple[object, ...]:
    """One samples row in ``_INSERT_SAMPLE``'s order (the import's hot path: a tuple, no dict)."""
    return (dataset_id, idx, sample.id, sample.input_text(), sample.completion, sample.expected,
            sample.model_dump_json(exclude_defaults=True))


def read_sample(record: Callable[[], DatasetRecord], idx: int, data: str | bytes) -> Sample | BrokenRow:
    """The one reader of a stored sample's JSON: the ``Sample`` it holds, or, when it does not
    validate (a teammate wrote the row by SQL, a hand edit, another studio's release), the
    ``BrokenRow`` naming the dataset, the sample (``NAME #idx``), the field and the dataset's author,
    with how to repair it. Every reader goes through here: ``datasets show``/``export`` (as a
    sentence), and a run, which stores that sample as its error and grades the others
    (engine/stored_samples.py). ``record`` is asked only for a broken row (a query)."""
    try:
        return Sample.model_validate_json(data)
    except (ValueError, TypeError, RecursionError) as exc:  # pydantic's ValidationError is a ValueError
        dataset = record()
        return BrokenRow(
            "dataset sample", f"{dataset.name} #{idx}", dataset.author, reason_of(exc),
            f"import the dataset again (`grader-studio datasets import FILE --name {dataset.name} --replace`)"
            f" or delete it (`grader-studio datasets delete {dataset.name}`)", dataset.name)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the length of an import: a row is a handful of new
    containers (parsed JSON, the row tuple), each freed by its reference count, none in a cycle;
    the collector would otherwise walk them every few hundred rows, ~8% of an import's CPU
    (``bench/profiles/issue38_import.txt``). Back as it was after, whatever happens."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _insert_samples(execute: Callable[[list[tuple[object, ...]]], object], dataset_id: int,
                    items: Iterable[Sample | SampleRow]) -> int:
    """Insert ``items`` as samples 0, 1, ... of the dataset, ``_INSERT_CHUNK`` rows to a call of
    ``execute`` (``_INSERT_SAMPLE``'s executemany); ``items`` may be a stream (``DatasetStream``)
    that raises mid-way: the rows it gave before are inserted then (the caller's transaction rolls
    them back, after looking at them: ``_first_duplicate``). Returns the count of samples."""
    count = 0
    chunk: list[tuple[object, ...]] = []
    try:
        for sample in items:
            # a SampleRow is already in stored form (DatasetStream.rows): the import's hot path
            chunk.append((dataset_id, count, *sample) if type(sample) is SampleRow or isinstance(sample, SampleRow)
                         else _sample_row(dataset_id, count, sample))
            count += 1
            if len(chunk) >= _INSERT_CHUNK:
                full, chunk = chunk, []
                execute(full)
    finally:
        if chunk:
            execute(chunk)
    return count


#: is any sample id of a dataset there twice? (one sort of the dataset's ids, in the database's
#: bounded memory: an import does not keep every id in Python to find out)
_ANY_DUPLICATE = ("SELECT sample_id FROM samples WHERE dataset_id = ? GROUP BY sample_id HAVING COUNT(*) > 1 "
                  "LIMIT 1")
#: the first sample (by idx) whose id an earlier one has, and that earlier one's idx
_FIRST_DUPLICATE = (
    "SELECT sample_id, first_idx, idx FROM ("
    " SELECT sample_id, idx, MIN(idx) OVER (PARTITION BY sample_id) AS first_idx,"
    " ROW_NUMBER() OVER (PARTITION BY sample_id ORDER BY idx) AS nth"
    " FROM samples WHERE dataset_id = ?) AS ranked"
    " WHERE nth = 2 ORDER BY idx LIMIT 1"
)


def _first_duplicate(conn: Connection, dataset_id: int) -> tuple[str, int, int] | None:
    """(sample id, idx it came first, idx it came again) of the first repeated id, or None."""
    if conn.exec_driver_sql(_ANY_DUPLICATE, (dataset_id,)).first() is None:
        return None
    row = conn.exec_driver_sql(_FIRST_DUPLICATE, (dataset_id,)).one()
    return str(row[0]), int(row[1]), int(row[2])


class DatasetRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def create(self, name: str, items: Iterable[Sample | SampleRow], *, format: str = "adaptive",
               source: str = "", replace: bool = False) -> DatasetRecord:
        """Store all samples or none; ``replace`` swaps a live dataset of the same name. ``items``
        that can leave their sample ids' check to the store (``DatasetStream``'s
        ``leave_ids_to_store``) have it done by the database once they are in (or when they raise:
        a repeated id before a bad line is the error, as it would be met first), in bounded memory
        whatever their number."""
        leave = getattr(items, "leave_ids_to_store", None)
        duplicate: Callable[[str, int, int], Exception] | None = leave() if leave is not None else None
        with self._engine.connect() as conn:
            sqlite = conn.dialect.name == "sqlite"
            # on SQLite the rows go to the driver's own cursor (executemany without the SQL layer),
            # and without SQLite's per-row foreign key check: every row names the dataset this
            # transaction made or holds (a connection setting, changeable only outside a transaction)
            raw = sqlite_connection(conn.connection) if sqlite else None
            if raw is not None:
                raw.execute("PRAGMA foreign_keys=OFF")
            try:
                with conn.begin(), _collector_paused():
                    dataset_id = self._claim(conn, name, format, source, replace)
                    execute = (partial(raw.cursor().executemany, _INSERT_SAMPLE) if raw is not None
                               else partial(conn.exec_driver_sql, _INSERT_SAMPLE))
                    try:
                        count = _insert_samples(execute, dataset_id, items)
                    except (DBAPIError, sqlite3.Error):  # the database's own: nothing more to ask it
                        raise
                    except Exception:  # the items' own error (a bad line): a repeated id before it comes first
                        if duplicate is not None and (found := _first_duplicate(conn, dataset_id)) is not None:
                            raise duplicate(*found) from None
                        raise
                    if duplicate is not None and (found := _first_duplicate(conn, dataset_id)) is not None:
                        raise duplicate(*found)
                    conn.execute(update(datasets).where(datasets.c.id == dataset_id).values(sample_count=count))
            finally:
                if raw is not None:
                    raw.execute("PRAGMA foreign_keys=ON")
        return self.get(name)

    @staticmethod
    def _claim(conn: Connection, name: str, format: str, source: str, replace: bool) -> int:
        """The id of the dataset ``create`` fills: a new one, or the trashed (or, with ``replace``,
        live) one of that name emptied."""
        row = conn.execute(select(datasets).where(datasets.c.name == name)).first()
        if row is None:
            return int(inserted_id(conn.execute(insert(datasets).values(
                name=name, format=format, source=source, sample_count=0, created_at=utcnow(), author=current_user(),
            ))))
        if row.deleted_at is None and not replace:
            raise Conflict(f"a dataset named {name!r} already exists (use another name, or replace it)")
        conn.execute(delete(samples).where(samples.c.dataset_id == row.id))
        conn.execute(update(datasets).where(datasets.c.id == row.id).values(
            format=format, source=source, deleted_at=None, created_at=utcnow(), provenance=None,
            author=current_user()))
        return int(row.id)

    def open_generated(self, name: str, provenance: JsonObject, *, format: str = "adaptive",
                       source: str = "") -> DatasetRecord:
        """An empty dataset that ``append`` fills as answers arrive (``grader-studio generate``)."""
        with self._engine.begin() as conn:
            row = conn.execute(select(datasets).where(datasets.c.name == name)).first()
            if row is not None and row.deleted_at is None:
                raise Conflict(f"a dataset named {name!r} already exists (use another name, or resume it)")
            values = dict(format=format, source=source, sample_count=0, created_at=utcnow(),
                          deleted_at=None, provenance=json.dumps(provenance), author=current_user())
            if row is not None:  # a trashed dataset of that name gives its name up
                conn.execute(delete(samples).where(samples.c.dataset_id == row.id))
                conn.execute(update(datasets).where(datasets.c.id == row.id).values(**values))
            else:
                conn.execute(insert(datasets).values(name=name, **values))
        return self.get(name)

    def append(self, dataset_id: int, items: Iterable[Sample | SampleRow],
               provenance: JsonObject | None = None) -> int:
        """Add samples after the last one, in one transaction (with the provenance so far, if
        given): what is committed survives the process being killed. Returns the new count."""
        with self._engine.begin() as conn:
            count: int = conn.execute(select(datasets.c.sample_count).where(datasets.c.id == dataset_id)).scalar_one()
            rows = [(dataset_id, count + n, *sample) if isinstance(sample, SampleRow)
                    else _sample_row(dataset_id, count + n, sample) for n, sample in enumerate(items)]
            if rows:
                conn.exec_driver_sql(_INSERT_SAMPLE, rows)
            values: JsonObject = {"sample_count": count + len(rows)}
            if provenance is not None:
                values["provenance"] = json.dumps(provenance)
            conn.execute(update(datasets).where(datasets.c.id == dataset_id).values(**values))
        return count + len(rows)

    def set_provenance(self, dataset_id: int, provenance: JsonObject) -> None:
        with self._engine.begin() as conn:
            conn.execute(update(datasets).where(datasets.c.id == dataset_id)
                         .values(provenance=json.dumps(provenance)))

    def reorder(self, dataset_id: int, keys: Sequence[str]) -> None:
        """Renumber a dataset's samples in the order of the JSON paths ``keys`` of their stored data
        (answers arrive out of order; a finished generation reads in its source's order). The keys
        are numbers, compared as numbers on both backends (PostgreSQL's json_extract gives text, so
        "10" would sort before "9"). Two passes keep (dataset, idx) unique throughout; the ordering
        is the database's, no sample parsed."""
        # the paths are bound, never spliced; DOUBLE PRECISION is REAL affinity on SQLite
        order = ", ".join("CAST(json_extract(data, ?) AS DOUBLE PRECISION)" for _ in keys)
        with self._engine.begin() as conn:
            ranked = conn.exec_driver_sql(
                f"SELECT id FROM samples WHERE dataset_id = ? ORDER BY {order}, idx", (dataset_id, *keys)).all()
            if not ranked:
                return
            conn.exec_driver_sql("UPDATE samples SET idx = -1 - idx WHERE dataset_id = ?", (dataset_id,))
            conn.exec_driver_sql("UPDATE samples SET idx = ? WHERE id = ?",
                                 [(n, row.id) for n, row in enumerate(ranked)])

    def list(self, *, include_deleted: bool = False) -> list[DatasetRecord]:
        query = select(datasets).order_by(datasets.c.name)
        if not include_deleted:
            query = query.where(datasets.c.deleted_at.is_(None))
        with self._engine.connect() as conn:
            return [DatasetRecord(**r._asdict()) for r in conn.execute(query)]

    def get(self, name: str, *, include_deleted: bool = False) -> DatasetRecord:
        with self._engine.connect() as conn:
            row = conn.execute(select(datasets).where(datasets.c.name == name)).first()
        if row is None or (row.deleted_at is not None and not include_deleted):
            raise NotFound(f"no dataset named {name!r}{did_you_mean(name, (d.name for d in self.list()))}")
        return DatasetRecord(**row._asdict())

    def by_id(self, dataset_id: int) -> DatasetRecord:
        with self._engine.connect() as conn:
            row = conn.execute(select(datasets).where(datasets.c.id == dataset_id)).first()
        if row is None:
            raise NotFound(f"no dataset with id {dataset_id}")
        return DatasetRecord(**row._asdict())

    def samples(self, name: str, offset: int = 0, limit: int | None = None) -> builtins.list[Sample]:
        record = self.get(name)
        return list(self.iter_samples(record.id, offset=offset, limit=limit))

    def sample(self, name: str, idx: int) -> Sample:
        found = self.samples(name, offset=idx, limit=1)
        if not found:
            raise NotFound(f"dataset {name!r} has no sample #{idx} (it has {self.get(name).sample_count})")
        return found[0]

    def iter_samples(self, dataset_id: int, *, offset: int = 0, limit: int | None = None,
                     skip: set[int] | None = None, page: int = 5000) -> Iterator[Sample]:
        """Samples in order, fetched a page at a time so a huge dataset never sits in memory."""
        yield from (s for _, s in self.iter_indexed(dataset_id, offset=offset, limit=limit, skip=skip, page=page))

    def iter_indexed(self, dataset_id: int, *, offset: int = 0, limit: int | None = None,
                     skip: set[int] | None = None, page: int = 5000) -> Iterator[tuple[int, Sample]]:
        end = None if limit is None else offset + limit
        cursor = offset
        while True:
            upper = cursor + page if end is None else min(cursor + page, end)
            if end is not None and cursor >= end:
                return
            with self._engine.connect() as conn:
                rows = conn.execute(
                    select(samples.c.idx, samples.c.data)
                    .where(samples.c.dataset_id == dataset_id, samples.c.idx >= cursor, samples.c.idx < upper)
                    .order_by(samples.c.idx)
                ).all()
            if not rows:
                return
            for idx, data in rows:
                if skip is None or idx not in skip:
                    yield idx, self.stored_sample(dataset_id, idx, data)
            cursor = upper

    def stored_sample(self, dataset_id: int, idx: int, data: str) -> Sample:
        """A stored sample validated on read (``read_sample``); one that does not validate is a
        BrokenRowError naming the dataset, the sample and its author: a sentence."""
        read = read_sample(lambda: self.by_id(dataset_id), idx, data)
        if isinstance(read, BrokenRow):
            raise BrokenRowError(read)
        return read

    def iter_raw(self, dataset_id: int, *, offset: int = 0, limit: int | None = None,
                 skip: set[int] | None = None, page: int = 5000) -> Iterator[tuple[int, str, str]]:
        """(idx, sample id, stored sample JSON) in order, unparsed: ``iter_indexed`` for graders that
        read the JSON themselves (a sandboxed function grader's worker)."""
        query = "SELECT idx, sample_id, data FROM samples WHERE dataset_id = ? AND idx >= ? AND idx < ? ORDER BY idx"
        end = None if limit is None else offset + limit
        return paged_samples(self._engine, query, dataset_id, offset=offset, end=end, skip=skip, page=page)

    def delete(self, name: str) -> None:
        record = self.get(name)
        with self._engine.begin() as conn:
            conn.execute(update(datasets).where(datasets.c.id == record.id).values(deleted_at=utcnow()))

    def restore(self, name: str) -> DatasetRecord:
        record = self.get(name, include_deleted=True)
        with self._engine.begin() as conn:
            conn.execute(update(datasets).where(datasets.c.id == record.id).values(deleted_at=None))
        return self.get(name)

    def count(self) -> int:
        with self._engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(datasets).where(datasets.c.deleted_at.is_(None))).scalar_one()
