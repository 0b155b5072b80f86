"""Analysts labelling one dataset at once, each from a connection of their own: nothing lost.

Label writes read the set's newest versions and then write. On SQLite a transaction that read first
and then writes failed at once with "database is locked" when another writer had committed in
between (the busy timeout does not wait for a stale WAL snapshot): a colleague's label was lost to
an error. Threads released together by a barrier, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from at_once import at_once

from studio.core.models import Sample
from studio.core.models.labels import LabelInput
from studio.core.store import Library

N = 30
WRITERS = 4


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def test_labellers_at_once_lose_nothing(db_path: Path | str) -> None:
    with Library.open(db_path) as lib:
        lib.datasets.create("d", [Sample(id=f"s{w}-{i}", completion="x") for w in range(WRITERS) for i in range(N)])

    def work(w: int, barrier: threading.Barrier) -> None:
        with Library.open(db_path) as lib:
            barrier.wait()
            for i in range(N):  # one label a transaction, as the window's keys write them
                lib.labels.put("d", LabelInput(sample_id=f"s{w}-{i}", verdict="PASS", note=f"w{w}",
                                               labeler=f"user{w}"))

    assert at_once(work, [(w,) for w in range(WRITERS)]) == []
    with Library.open(db_path) as lib:
        current = lib.labels.current("d")
    assert len(current) == WRITERS * N
    assert {(sid, label.note) for sid, label in current.items()} == {
        (f"s{w}-{i}", f"w{w}") for w in range(WRITERS) for i in range(N)}


def test_analysts_saving_graders_at_once_lose_nothing(db_path: Path | str) -> None:
    """Each analyst creates a grader and saves versions of it while the others do the same: every
    version is kept (creating and saving read the head row, then write)."""
    from studio.core.models import FunctionGrader

    saves = 8
    Library.open(db_path).close()  # the library exists (first opens migrate it)

    def grader(w: int, v: int) -> FunctionGrader:
        return FunctionGrader(key=f"g{w}", name=f"G{w}", source=f"async def grade(thread):\n    return {v}.0\n")

    def work(w: int, barrier: threading.Barrier) -> None:
        with Library.open(db_path) as lib:
            barrier.wait()
            lib.graders.create(grader(w, 0))
            for v in range(1, saves):
                lib.graders.save(grader(w, v))

    assert at_once(work, [(w,) for w in range(WRITERS)]) == []
    with Library.open(db_path) as lib:
        assert {lib.graders.get(f"g{w}").current_version for w in range(WRITERS)} == {saves}
