from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from studio.core.engine.runner import Progress, RunOptions, execute_run, run_grader, start_run
from studio.core.models import BuiltinGrader, BuiltinOptions, Sample, Turn
from studio.core.store import Library, NotFound


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db



def samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"{i}+{i}?")],
                   completion=str(2 * i if i % 4 else i), expected=str(2 * i)) for i in range(n)]


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.datasets.create("math", samples(5000))
    return library


def test_run_stores_every_result_and_aggregates(lib: Library) -> None:
    info = run_grader(lib, "exact", "math")
    assert info.status == "completed" and info.done == 5000 and info.counts == {"ok": 5000}
    # every 4th sample (i % 4 == 0) answers i instead of 2i; only i == 0 is still right
    assert info.aggregates["mean"] == pytest.approx((5000 - 1250 + 1) / 5000)
    assert info.aggregates["metrics"]["score"] == pytest.approx(info.aggregates["mean"])
    rows = lib.runs.results(info.id, limit=3)
    assert [r["sample_id"] for r in rows] == ["s0", "s1", "s2"] and rows[0]["score"] == 1.0


def test_limit_and_version(lib: Library) -> None:
    lib.graders.save(BuiltinGrader(key="exact", function="exact_match", options=BuiltinOptions(negate=True)))
    info = run_grader(lib, "exact", "math", RunOptions(limit=10, version=1))
    assert info.total == 10 and info.grader_version == 1 and info.aggregates["mean"] == pytest.approx(0.8)
    with pytest.raises(NotFound):
        run_grader(lib, "exact", "math", RunOptions(version=9))


def test_cancel_then_resume_grades_each_sample_once(lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    # slow the built-in scorer down (small batches, a pause each) so the cancel lands mid-run
    from studio.core.graders import builtin

    original = builtin.BuiltinScorer.score_batch

    async def slow(self, batch):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.005)
        return await original(self, batch)

    monkeypatch.setattr(builtin.BuiltinScorer, "batch_size", 50)
    monkeypatch.setattr(builtin.BuiltinScorer, "score_batch", slow)
    cancel = threading.Event()
    seen: list[Progress] = []

    def on_progress(progress: Progress) -> None:
        seen.append(progress)
        if progress.done >= 1000:
            cancel.set()

    run = start_run(lib, "exact", "math")
    first = execute_run(lib, run.id, on_progress=on_progress, cancel=cancel)
    assert first.status == "cancelled" and 0 < first.done < 5000
    assert seen[-1].finished
    done_before = lib.runs.done_indices(run.id)
    resumed = execute_run(lib, run.id)
    assert resumed.status == "completed" and resumed.done == 5000
    assert len(lib.runs.results(run.id)) == 5000
    assert done_before <= lib.runs.done_indices(run.id)


def test_progress_reports_written_outcomes(lib: Library) -> None:
    written: list[int] = []
    run_grader(lib, "exact", "math", on_progress=lambda p: written.extend(i for i, _ in p.written))
    assert sorted(written) == list(range(5000))


def test_a_cancel_after_the_last_sample_leaves_the_run_completed(lib: Library) -> None:
    """The window quitting ("Cancel run and quit") as the run ends: every sample is graded, so the
    run is complete, never "cancelled" (and no later run could resume it: there is nothing left)."""
    cancel = threading.Event()

    def cancel_at_the_end(progress: Progress) -> None:
        if progress.done == progress.total:
            cancel.set()

    run = run_grader(lib, "exact", "math", on_progress=cancel_at_the_end, cancel=cancel)
    assert cancel.is_set() and run.done == run.total
    assert run.status == "completed" and lib.runs.get(run.id).status == "completed"


def test_a_guarded_status_change_leaves_a_completed_run_as_it_is(lib: Library) -> None:
    run = run_grader(lib, "exact", "math")
    assert not lib.runs.set_status(run.id, "cancelled", only_from=("running",))
    assert lib.runs.get(run.id).status == "completed"
    started = start_run(lib, "exact", "math")
    lib.runs.claim(started.id)
    assert lib.runs.set_status(started.id, "cancelled", only_from=("running",))
    assert lib.runs.get(started.id).status == "cancelled"
