"""The run repository: results written as they arrive, re-grades replace, NA is not zero, and a run
is graded by one live process at a time."""

from __future__ import annotations

import pytest

from studio.core.engine.summary import run_aggregates
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
    agg = run_aggregates(library, run_id, 0.5)
    assert agg["count"] == 4 and agg["mean"] == 0.5 and agg["pass_rate"] == 0.5
    assert agg["statuses"] == {"ok": 1, "invalid": 1, "error": 1, "skipped": 1}
    assert library.runs.results(run_id, failed_only=True)[0]["sample_idx"] == 1


def test_an_empty_run_has_no_mean_rather_than_zero(library: Library) -> None:
    agg = run_aggregates(library, new_run(library))
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


def test_plain_scored_rows_are_stored_exactly_as_full_rows_are(library: Library) -> None:
    """``write_rows`` binds a plain scored row (``ok_row``) by its six varying values and lets the
    columns' defaults fill the rest: what is stored is the same as the full row would store, and a
    batch mixing plain and other rows keeps its order (a sample written twice keeps its last row)."""
    from studio.core.store.runs import RESULT_COLUMNS, ok_row, outcome_values, scores_prefix

    run_id = new_run(library, total=6)
    prefix = scores_prefix("exact")
    rows = [
        ok_row(run_id, 0, "q0", prefix, 1.0, 2.5),
        outcome_values(run_id, 1, "q1", Outcome(status="error", error="boom", duration_ms=1.0)),
        ok_row(run_id, 2, "q2", prefix, 0.25, 3.0),
        outcome_values(run_id, 3, "q3", Outcome(status="ok", score=0.5, scores={"exact": 0.5}, rationale="close",
                                               prompt_tokens=7, cached=True)),
        outcome_values(run_id, 4, "q4", Outcome.scored(0.75, {"exact": 0.75})),  # plain, from an Outcome
        ok_row(run_id, 1, "q1", prefix, 0.0, 4.0),  # sample 1 again, later in the batch: this row wins
    ]
    library.runs.write_rows(rows)
    stored = {r["sample_idx"]: r for r in library.runs.results(run_id)}
    assert sorted(stored) == [0, 1, 2, 3, 4]
    expected = {row[1]: row for row in rows}
    for idx, row in expected.items():
        got = stored[idx]
        full = dict(zip(("run_id", *RESULT_COLUMNS), row, strict=True))
        for column in ("sample_id", "status", "score", "rationale", "error", "duration_ms", "prompt_tokens",
                       "completion_tokens", "cached_tokens"):
            assert got[column] == full[column], (idx, column)
        assert got["cached"] is bool(full["cached"])
        assert got["details"] == {} and got["raw"] is None
    assert stored[3]["cached"] is True and stored[3]["prompt_tokens"] == 7
    assert stored[1]["status"] == "ok" and stored[1]["error"] is None
    assert library.runs.get(run_id).counts == {"ok": 5}


def test_insert_new_rows_leaves_stored_samples_alone_on_both_paths(library: Library) -> None:
    """The exactly-once twin (remote executors): a plain row and a full row of a sample already
    stored are both skipped, and only the new ones count."""
    from studio.core.store.runs import ok_row, outcome_values, scores_prefix

    run_id = new_run(library)
    prefix = scores_prefix("exact")
    assert library.runs.insert_new_rows([ok_row(run_id, 0, "q0", prefix, 1.0, 1.0),
                                         outcome_values(run_id, 1, "q1", Outcome.failure("boom"))]) == 2
    again = [ok_row(run_id, 0, "q0", prefix, 0.0, 1.0), ok_row(run_id, 1, "q1", prefix, 0.0, 1.0),
             outcome_values(run_id, 2, "q2", Outcome(status="ok", score=0.5, rationale="r"))]
    assert library.runs.insert_new_rows(again) == 1
    rows = {r["sample_idx"]: (r["status"], r["score"]) for r in library.runs.results(run_id)}
    assert rows == {0: ("ok", 1.0), 1: ("error", None), 2: ("ok", 0.5)}


def test_scored_rows_are_the_rows_each_value_gives_alone() -> None:
    """``scored_rows`` makes each distinct score's text once a batch: the rows are still those of
    each value alone, the sign of a zero kept, a bool or an Outcome never taken for a float."""
    import math

    from studio.core.store.runs import ok_row, outcome_values, scored_rows, scores_prefix

    keyed = [(i, f"s{i}", "x", "y", None) for i in range(8)]
    prefix = scores_prefix("exact")

    def other(row: tuple[object, ...], value: object) -> tuple[object, ...]:
        outcome = value if isinstance(value, Outcome) else Outcome.invalid(f"not a score: {value!r}", None)
        return outcome_values(1, row[0], row[1], outcome)  # type: ignore[arg-type]

    def alone(values: list[object]) -> list[tuple[object, ...]]:
        return [ok_row(1, i, f"s{i}", prefix, v, 0.5) if type(v) is float and math.isfinite(v)
                else other(keyed[i], v) for i, v in enumerate(values)]

    for values in ([1.0, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0],  # the fast path: no check a row
                   [1.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 1.0],  # zeros, none negative: the fast path too
                   [1.0, 0.0, -0.0, 1.0, 0.0, 0.5, -0.0, 1.0],  # zeros: each keeps its sign
                   [1.0, True, 0.5, 1, math.nan, math.inf, Outcome.failure("boom"), 1.0]):
        rows = scored_rows(1, keyed, values, "exact", 0.5, other)
        assert rows == alone(values), values
        assert [type(r[4]) for r in rows] == [type(r[4]) for r in alone(values)]
    zeros = scored_rows(1, keyed[:2], [0.0, -0.0], "exact", 0.5, other)
    assert [r[5] for r in zeros] == ['{"exact": 0.0}', '{"exact": -0.0}']


def test_a_none_binds_as_null_through_the_store_adapter(library: Library) -> None:
    """The store registers an identity adapter for None (binding without sqlite3's failed adapter
    lookups): a full row's Nones are stored as NULL, as before."""
    import sqlite3

    from studio.core.store.runs import outcome_values

    assert sqlite3.connect(":memory:").execute("SELECT typeof(?), ? IS NULL", (None, None)).fetchone() == ("null", 1)
    run_id = new_run(library, total=1)
    library.runs.write_rows([outcome_values(run_id, 0, "q0", Outcome(status="error", error="boom"))])
    with library.engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT score IS NULL, rationale IS NULL, details IS NULL, raw IS NULL,"
                                      " error FROM results WHERE run_id = ?", (run_id,)).one()
    assert tuple(stored) == (True, True, True, True, "boom")
