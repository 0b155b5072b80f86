"""The ledger's two readings of a tally agree: the SQL one (``ledger.fold_sql`` through
run_graders ``tally``, over the rows as the store keeps them) and the streaming one
(``ledger.Folding`` through the writer's ``written_tally.Sums``, over the rows as they were
written), on random rows of every status, judges' verdicts, no score, scores that are not finite
numbers (NaN, ±inf: no score, as NA is), tokens, cached and time, in random batches; on SQLite and
PostgreSQL (this folder's ``db_path``)."""

from __future__ import annotations

import json
import math
import operator
import sys
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.core.engine.summary import summarize
from studio.core.engine.written_tally import Sums
from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.models.pass_rule import decide, scored_score
from studio.core.store import Library
from studio.core.store.ledger import FOLDS, SPLITS, Tally
from studio.core.store.run_graders import rows_sql, tally
from studio.core.store.runs import outcome_values

#: huge finite scores: a square past the largest double from 2**512 (~1.3e154) on, a sum of two past
#: it from ~9e307; and the splits' edges (store/ledger ``SPLITS``)
HUGE = st.one_of(st.floats(min_value=1e154, max_value=sys.float_info.max),
                 st.sampled_from([2.0 ** 480, 2.0 ** 512, 2.0 ** 960, 1e308, sys.float_info.max]))
SCORES = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, -1.0, 1e-200, math.nan, math.inf, -math.inf]),
                   st.floats(min_value=-10, max_value=10, allow_nan=False), HUGE, HUGE.map(operator.neg))
VERDICTS = st.one_of(st.none(), st.sampled_from(["PASS", "FAIL", "NA"]))
ROWS = st.tuples(st.sampled_from(["ok", "ok", "ok", "error", "invalid", "skipped"]), SCORES, VERDICTS,
                 st.integers(0, 500), st.integers(0, 50), st.booleans(),
                 st.floats(min_value=0, max_value=5000, allow_nan=False))
THRESHOLDS = st.sampled_from([0.0, 0.5, 1.0, -1.0, 0.3])
FLOATS = ("score_sum", "score_sum_high", "score_sumsq", "score_sumsq_high", "duration_ms")

#: one run whose rows each example replaces (a run a example made PostgreSQL's examples slow)
_RUN: dict[str, int] = {}


def _outcome(status: str, score: float | None, verdict: str | None, prompt: int, completion: int,
             cached: bool, duration: float) -> Outcome:
    return Outcome(status=status, score=score, scores={} if score is None else {"score": score},
                   details={"verdict": verdict} if verdict else {}, prompt_tokens=prompt,
                   completion_tokens=completion, cached_tokens=min(prompt, completion), cached=cached,
                   duration_ms=duration)


def _run(library: Library) -> int:
    key = str(library.engine.url)
    if key not in _RUN:
        grader = library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        data = library.datasets.create("d", [Sample(id="s", messages=[Turn(role="user", content="q")],
                                                    completion="a")])
        _RUN[key] = library.runs.create(grader.id, 1, data.id, 1).id
    return _RUN[key]


def _slack(terms: list[Fraction]) -> Fraction:
    """How far a sum of ``terms`` added one by one in any order may lie from their exact sum: n
    roundings, each within 2**-52 of the partial sum, itself within the terms' absolute sum."""
    return len(terms) * Fraction(2) ** -52 * sum(map(abs, terms), Fraction(0)) + Fraction(1, 10 ** 9)


def near(value: float, exact: Fraction, slack: Fraction) -> bool:
    """``value`` is the exact sum up to the rounding of its additions (inf: the exact sum is past
    the largest double, to that rounding)."""
    if math.isinf(value):
        return abs(exact) + slack >= Fraction(sys.float_info.max) and (exact > 0) == (value > 0)
    return abs(Fraction(value) - exact) <= slack + abs(exact) * Fraction(2) ** -50


def same(streamed: Tally, computed: Tally, scored: list[float]) -> None:
    """The two tallies are equal, and both hold the sums of ``scored`` (each part of a split sum,
    store/ledger ``SPLITS``) up to the rounding of SQL's additions in its scan order (the streaming
    tally adds exactly)."""
    assert streamed.model_dump(exclude=set(FLOATS)) == computed.model_dump(exclude=set(FLOATS))
    assert streamed.duration_ms == pytest.approx(computed.duration_ms, rel=1e-12, abs=1e-9)
    for op, split in SPLITS.items():
        for high in (False, True):
            terms = [Fraction(split.term(s) if high else s if split.power == 1 else 0.0 if abs(s) < 1e-150 else s * s)
                     for s in scored if (abs(s) >= split.limit) == high]
            name = f"score_{op}{'_high' if high else ''}"
            for read in (streamed, computed):
                assert near(getattr(read, name), sum(terms, Fraction(0)), _slack(terms)), (name, read)
    for whole, power in (("sum_of_scores", 1), ("sum_of_squares", 2)):
        terms = [Fraction(s) ** power for s in scored]
        for read in (streamed, computed):
            value = getattr(read, whole)()
            assert near(value, sum(terms, Fraction(0)), _slack(terms)), (whole, read)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(ROWS, max_size=40), THRESHOLDS, st.lists(st.integers(1, 40), min_size=1, max_size=5))
def test_streaming_and_sql_tallies_agree(library: Library, rows: list[tuple], threshold: float,  # type: ignore[type-arg]
                                         cuts: list[int]) -> None:
    run_id = _run(library)
    with library.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM results WHERE run_id = ?" if library.engine.dialect.name == "sqlite"
                             else "DELETE FROM results WHERE run_id = %s", (run_id,))
    written = [outcome_values(run_id, idx, f"s{idx}", _outcome(*row)) for idx, row in enumerate(rows)]
    library.runs.write_rows(written)
    sums, start = Sums(), 0
    for cut in cuts * len(written):  # the batches the writer happened to write
        if start >= len(written):
            break
        sums.add_rows(written[start:start + cut], threshold)
        start += cut
    streamed = sums.tally()
    computed = tally(library, rows_sql(False), (run_id,), threshold)
    scored = [s for status, score, *_ in rows if (s := scored_score(status, score)) is not None]
    same(streamed, computed, scored)
    # and both are what the pass rule and the mean's rule say, row by row
    assert computed.n == len(scored) and computed.total == len(rows)
    decisions = [decide(status, score, verdict, threshold) for status, score, verdict, *_ in rows]
    assert computed.decisions == {d: decisions.count(d) for d in ("pass", "fail", "na", "error")}
    assert computed.score_min == (min(scored) if scored else None)
    assert all(math.isfinite(getattr(computed, name)) for name in FLOATS)  # (what a stored tally's JSON holds)
    # the summary says what is honest: a mean within the scores (also of scores whose sum a double
    # cannot hold), an interval only when the spread is finite, never inf or NaN shown as a number
    summary = summarize("g", 1, threshold, computed)
    if scored:
        exact_mean = sum(map(Fraction, scored), Fraction(0)) / len(scored)
        assert summary.mean is not None and min(scored) <= summary.mean <= max(scored)
        slack = _slack([Fraction(s) / len(scored) for s in scored])
        assert abs(Fraction(summary.mean) - exact_mean) <= slack + abs(exact_mean) * Fraction(2) ** -48
    else:
        assert summary.mean is None
    if summary.mean_ci is not None:
        low, high = summary.mean_ci
        assert math.isfinite(low) and math.isfinite(high) and low <= summary.mean <= high
    if not math.isfinite(computed.sum_of_squares()):
        assert summary.mean_ci is None
    json.dumps(summary.to_json(), allow_nan=False)


def test_a_tally_is_read_back_by_its_folds() -> None:
    """The stored form (``Tally.model_dump``, kept in a completed run's aggregates) and the folds'
    order name the same fields: a fold added is a field stored."""
    values = list(range(1, len(FOLDS) + 1))
    read = Tally.of_values(values)
    dumped = json.loads(read.model_dump_json())
    named = {f.name for f in FOLDS}
    flat = {f"{k}.{kk}" for k, v in dumped.items() if isinstance(v, dict) for kk in v} \
        | {k for k, v in dumped.items() if not isinstance(v, dict)}
    assert named == flat


def test_every_writer_builds_the_declared_row() -> None:
    """The result row is declared once (``ResultRow``, ``GraderRow``): the tables' columns are made
    from it, and every writer's tuple reads back by its names (a field moved in one writer only
    would put a score in the scores column)."""
    from studio.core.store.ledger import OUTCOME, GraderRow, ResultRow
    from studio.core.store.runs import (
        grader_values,
        ok_row,
        row_outcome,
        scored_rows,
        scores_prefix,
    )
    from studio.core.store.tables import grader_results, results

    assert [c.name for c in results.columns][1:] == list(ResultRow._fields)
    assert [c.name for c in grader_results.columns] == list(GraderRow._fields)
    outcome = Outcome(status="ok", score=0.25, scores={"m": 0.25}, rationale="why", details={"verdict": "PASS"},
                      error=None, raw={"x": 1}, duration_ms=3.5, prompt_tokens=7, completion_tokens=2, cached=True,
                      cached_tokens=1)
    written = ResultRow._make(outcome_values(9, 4, "s4", outcome))
    assert (written.run_id, written.sample_idx, written.sample_id, written.status, written.score) == (9, 4, "s4", "ok", 0.25)
    assert (json.loads(written.details), written.prompt_tokens, written.cached, written.cached_tokens) == (
        {"verdict": "PASS"}, 7, 1, 1)
    assert row_outcome(tuple(written)) == outcome
    graded = GraderRow._make(grader_values(9, 2, 4, outcome))
    assert (graded.slot, graded.sample_idx) == (2, 4) and graded[3:] == written[3:] and len(OUTCOME) == 12
    plain = Outcome.scored(0.5, {"m": 0.5}, duration_ms=1.0)
    expected = outcome_values(9, 4, "s4", plain)
    assert ok_row(9, 4, "s4", scores_prefix("m"), 0.5, 1.0) == expected
    assert scored_rows(9, [(4, "s4")], [0.5], "m", 1.0, lambda row, value: ()) == [expected]
