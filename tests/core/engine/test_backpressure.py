"""The writer keeps up: a fast grader waits for the database instead of holding a run's results in
memory, and results are in the library (visible to another reader) while the run goes on."""

from __future__ import annotations

import sqlite3

import pytest

from studio.core.engine import runner
from studio.core.engine.runner import Progress, run_grader
from studio.core.graders import builtin
from studio.core.models import BuiltinGrader, Sample
from studio.core.store import Library


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.datasets.create("big", [Sample(id=f"s{i}", completion=str(i), expected=str(i)) for i in range(30_000)])
    return library


def test_the_producer_waits_for_the_writer(lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    graded = written = 0
    most_ahead = 0
    original_score = builtin.BuiltinScorer.score_batch
    original_write = lib.runs.write_rows

    async def counting_score(self, batch):  # type: ignore[no-untyped-def]
        nonlocal graded
        outcomes = await original_score(self, batch)
        graded += len(outcomes)
        return outcomes

    def counting_write(rows):  # type: ignore[no-untyped-def]
        nonlocal written, most_ahead
        most_ahead = max(most_ahead, graded - written)
        original_write(rows)
        written += len(rows)

    monkeypatch.setattr(builtin.BuiltinScorer, "score_batch", counting_score)
    monkeypatch.setattr(lib.runs, "write_rows", counting_write)
    info = run_grader(lib, "exact", "big")
    assert info.done == 30_000 and written == 30_000
    # graded but not yet written: at most the queue's bound, the batches in the grader's and the
    # writer's hands and the writer's buffer (below FLUSH_ROWS), never the whole run
    bound = (runner.OUTBOX_PER_WORKER + 3) * builtin.BuiltinScorer.batch_size + runner.FLUSH_ROWS
    assert most_ahead <= bound < 30_000


def test_results_are_visible_to_another_reader_during_the_run(lib: Library, db_path) -> None:  # type: ignore[no-untyped-def]
    seen: list[tuple[int, int]] = []
    reader = sqlite3.connect(db_path)

    def watch(progress: Progress) -> None:
        if not progress.finished:
            (count,) = reader.execute("SELECT count(*) FROM results WHERE run_id = ?", (progress.run_id,)).fetchone()
            seen.append((count, progress.done))

    info = run_grader(lib, "exact", "big", on_progress=watch)
    reader.close()
    assert info.done == 30_000
    # the first progress event comes long before the end, and what it reports is already stored
    assert seen and seen[0][1] < 30_000
    assert all(count == done for count, done in seen)
