"""The samples a run still has to grade, as the columns a text check reads: no JSON parsed.

A built-in check without an extractor compares the sample's completion with its expected answer,
both stored as columns of ``samples`` beside the sample's JSON (``datasets._sample_row``). Reading
those two columns instead of parsing every sample's JSON into a ``Sample`` is most of a built-in
run's reading cost (bench/profiles/issue38_*.txt). A sample without a completion (its answer is in
its messages) comes with its JSON, so the caller can read it the long way.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Engine

from .database import DriverRow, driver_connection

#: ``Pending``'s text lane: rows of the columns a built-in check reads
TEXTS = "texts"

#: (idx, sample id, completion, expected, the sample's JSON when it has no completion, else None)
TextRow = tuple[int, str, "str | None", "str | None", "str | None"]

_QUERY = ("SELECT idx, sample_id, completion, expected, CASE WHEN completion IS NULL THEN data END"
          " FROM samples WHERE dataset_id = ? AND idx >= ? AND idx < ? ORDER BY idx")


class RawRows(Protocol):
    """The library's datasets (store/datasets.py ``DatasetRepository``), as ``Pending`` reads them."""

    def iter_raw(self, dataset_id: int, *, offset: int = 0, limit: int | None = None,
                 skip: set[int] | None = None, page: int = 5000) -> Iterator[tuple[int, str, str]]: ...


@dataclass(frozen=True)
class Pending:
    """The samples a run still has to grade (the first ``limit`` of the dataset's, those in ``skip``
    left out), opened in the lane its scorers read: called with ``TEXTS``, the text rows
    (``iter_texts``: idx, sample id, completion, expected, JSON if no completion; built-in checks);
    else the stored JSON rows (idx, sample id, JSON), checked and parsed by the engine a batch at a time."""

    engine: Engine
    datasets: RawRows
    dataset_id: int
    limit: int | None
    skip: set[int]

    def __call__(self, raw: bool | str) -> Iterator[DriverRow]:
        if raw == TEXTS:
            return iter_texts(self.engine, self.dataset_id, limit=self.limit, skip=self.skip)
        return self.datasets.iter_raw(self.dataset_id, limit=self.limit, skip=self.skip)


def iter_texts(engine: Engine, dataset_id: int, *, limit: int | None = None, skip: set[int] | None = None,
               page: int = 5000) -> Iterator[TextRow]:
    """The dataset's samples in order (the first ``limit``; those in ``skip`` left out), a page of
    ``page`` at a time so memory stays bounded whatever the dataset's size."""
    return paged_samples(engine, _QUERY, dataset_id, end=limit, skip=skip, page=page)


def paged_samples(engine: Engine, query: str, dataset_id: int, *, offset: int = 0, end: int | None = None,
                  skip: set[int] | None = None, page: int = 5000) -> Iterator[DriverRow]:
    """The rows ``query`` (parameters: the dataset, a page's first idx and its end; its first column
    the sample's idx) gives from ``offset`` up to ``end``, a page at a time, those in ``skip`` left
    out. Read through the driver's own connection: its rows are the plain tuples handed on (no SQL
    layer Row per sample on a run's hot path). The pages are chained in C: no generator step a
    sample (~100 -> ~25 ns a sample, bench/profiles/issue38_writes2_run.txt)."""
    return itertools.chain.from_iterable(_pages(engine, query, dataset_id, offset, end, skip, page))


def _pages(engine: Engine, query: str, dataset_id: int, offset: int, end: int | None, skip: set[int] | None,
           page: int) -> Iterator[list[DriverRow]]:
    cursor = offset
    while end is None or cursor < end:
        upper = cursor + page if end is None else min(cursor + page, end)
        fairy = engine.raw_connection()
        try:
            rows = driver_connection(fairy).execute(query, (dataset_id, cursor, upper)).fetchall()
        finally:
            fairy.close()
        if not rows:
            return
        yield [r for r in rows if r[0] not in skip] if skip else rows
        cursor = upper
