"""The run repository: results written as they arrive, re-grades replace, NA is not zero, and a run
is graded by one live process at a time."""

from __future__ import annotations

import pytest

from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.store import Conflict, Library, NotFound


def new_run(lib: Library, total: int = 4) -> int:
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("qa", [
        Sample(id=f"q{i}", messages=[Turn(role="user", content=f"q{i}")], completion="a", expected="a")
        for i in range(total)])
    return lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, total).id


def test_results_are_kept_per_batch_and_a_regraded_sample_is_replaced(library: Library) -> None:
    run_id = new_run(library)
    library.runs.write_results(run_id, [(0, "q0", Outcome(status="error", error="timed out")),
                                        (2, "q2", Outcome(status="ok", score=1.0))])
    assert library.runs.done_indices(run_id) == {0, 2}
    library.runs.write_results(run_id, [(0, "q0", Outcome(status="ok", score=0.25))])
    rows = library.runs.results(run_id)
    assert [(r["sample_idx"], r["status"], r["score"]) for r in rows] == [(0, "ok", 0.25), (2, "ok", 1.0)]
    info = library.runs.get(run_id)
    assert info.done == 2 and info.total == 4 and info.counts == {"ok": 2}


def test_aggregates_leave_errors_and_skips_out_of_the_mean(library: Library) -> None:
    run_id = new_run(library)
    library.runs.write_results(run_id, [
        (0, "q0", Outcome(status="ok", score=1.0)), (1, "q1", Outcome(status="invalid", score=0.0)),
        (2, "q2", Outcome(status="error", error="boom")), (3, "q3", Outcome(status="skipped"))])
    agg = library.runs.aggregates(run_id, pass_threshold=0.5)
    assert agg["count"] == 4 and agg["mean"] == 0.5 and agg["pass_rate"] == 0.5
    assert agg["statuses"] == {"ok": 1, "invalid": 1, "error": 1, "skipped": 1}
    assert library.runs.results(run_id, failed_only=True)[0]["sample_idx"] == 1


def test_an_empty_run_has_no_mean_rather_than_zero(library: Library) -> None:
    agg = library.runs.aggregates(new_run(library))
    assert agg["count"] == 0 and agg["mean"] is None and agg["pass_rate"] is None


def test_claim_refuses_a_completed_or_missing_run(library: Library) -> None:
    run_id = new_run(library)
    library.runs.claim(run_id)
    assert library.runs.get(run_id).status == "running"
    library.runs.set_status(run_id, "completed", aggregates={"mean": 1.0})
    info = library.runs.get(run_id)
    assert info.status == "completed" and info.finished_at is not None and info.aggregates == {"mean": 1.0}
    with pytest.raises(Conflict, match="already complete"):
        library.runs.claim(run_id)
    with pytest.raises(NotFound, match="no run with id 999"):
        library.runs.claim(999)
    assert [r.id for r in library.runs.list(grader_key="exact")] == [run_id]
    assert library.runs.list(grader_key="other") == []
