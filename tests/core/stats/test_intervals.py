"""Every interval of a mean stays in the score's range and holds the mean (core/intervals.py), and the
run summary every surface reads uses it (engine/summary.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from studio.core import intervals
from studio.core.engine.summary import summarize
from studio.core.stats import proportion
from studio.core.store.ledger import Batch, Folding, Tally


def _sums(scores: list[float]) -> tuple[int, float, float]:
    return len(scores), math.fsum(scores), math.fsum(x * x for x in scores)


def _tally(scores: list[float]) -> Tally:
    n, total, sumsq = _sums(scores)
    return Tally(total=n, statuses={"ok": n}, decisions={"pass": 0, "fail": 0}, n=n, score_sum=total,
                 score_sumsq=sumsq, score_min=min(scores), score_max=max(scores))


ranges = st.sampled_from([(0.0, 1.0), (1.0, 5.0), (-1.0, 1.0), (0.0, 10.0), (-3.5, 0.25)])


@st.composite
def bounded_scores(draw: st.DrawFn) -> tuple[tuple[float, float], list[float]]:
    low, high = draw(ranges)
    ends = draw(st.booleans())  # two-valued scores (0/1 and the like) as often as continuous ones
    value = st.sampled_from([low, high]) if ends else st.floats(low, high, allow_nan=False)
    return (low, high), draw(st.lists(value, min_size=1, max_size=80))


@settings(max_examples=400, deadline=None)
@given(bounded_scores())
def test_any_bounded_scores_give_an_interval_in_range_that_holds_the_mean(case: tuple[tuple[float, float], list[float]]) -> None:
    (low, high), scores = case
    n, total, sumsq = _sums(scores)
    found = intervals.mean_interval(n, total, sumsq, (low, high), observed=(min(scores), max(scores)))
    assert found is not None  # a bounded score has an interval from n = 1 on (the range itself, at worst)
    mean = min(high, max(low, total / n))
    assert low <= found.low <= mean <= found.high <= high


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=60))
def test_zero_one_scores_of_a_grader_without_declared_bounds_stay_in_0_1(scores: list[float]) -> None:
    """A function grader declares no range; when it only ever returns 0 and 1, its mean is a share."""
    found = summarize("f", 1, 0.5, _tally(scores), bounds=None)
    assert found.mean_ci is not None
    assert 0.0 <= found.mean_ci[0] <= found.mean <= found.mean_ci[1] <= 1.0
    assert found.interval_method == intervals.WILSON


@pytest.mark.parametrize("scores", [[1, 1, 1, 0], [1, 0], [1, 1, 1, 1, 1, 0, 1, 1], [0] * 5 + [1], [1]])
def test_the_summary_of_0_1_scores_at_small_n_stays_in_range(scores: list[int]) -> None:
    """The normal approximation gave [0.26, 1.24] for 1, 1, 1, 0 (issue 45's [0.25, 1.08] kind)."""
    found = summarize("binary", 1, 0.5, _tally([float(x) for x in scores]), bounds=(0.0, 1.0))
    low, high = found.mean_ci or (None, None)
    assert low is not None and high is not None
    assert 0.0 <= low <= found.mean <= high <= 1.0
    passed = sum(scores)
    expected = sps.binomtest(passed, len(scores)).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000), st.data())
def test_wilson_is_scipys(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n))
    expected = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert intervals.wilson(k, n) == pytest.approx((expected.low, expected.high), abs=1e-9)
    assert proportion(k, n).ci == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_wilson_on_a_range_maps_the_share_at_the_top_back_onto_it() -> None:
    """A range judge that only said 1 or 5: the share of 5s, on the 1..5 scale."""
    scores = [5.0] * 7 + [1.0] * 3
    found = summarize("range", 1, 3.0, _tally(scores), bounds=(1.0, 5.0))
    share = sps.binomtest(7, 10).proportion_ci(method="wilson")
    assert found.mean_ci == pytest.approx((1 + 4 * share.low, 1 + 4 * share.high))
    assert found.interval_method == intervals.WILSON


def test_continuous_bounded_scores_take_the_t_interval_clipped() -> None:
    scores = [0.99, 0.97, 1.0, 0.2]
    n, total, sumsq = _sums(scores)
    found = intervals.mean_interval(n, total, sumsq, (0.0, 1.0))
    assert found is not None and found.method == intervals.T_CLIPPED
    unclipped = sps.t.interval(0.95, n - 1, loc=total / n, scale=sps.sem(scores))
    assert unclipped[1] > 1.0  # the case is one where the t interval leaves the range
    assert (found.low, found.high) == pytest.approx((unclipped[0], 1.0))


def test_unbounded_scores_keep_the_plain_t_interval_and_none_below_two() -> None:
    scores = [3.0, 7.5, -2.0]
    n, total, sumsq = _sums(scores)
    found = intervals.mean_interval(n, total, sumsq, None, observed=(-2.0, 7.5))
    expected = sps.t.interval(0.95, n - 1, loc=total / n, scale=sps.sem(scores))
    assert found is not None and (found.low, found.high) == pytest.approx(expected)
    assert intervals.mean_interval(1, 3.0, 9.0, None, observed=(3.0, 3.0)) is None


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 12, 29, 30, 31, 100, 5000])
def test_t_quantile_is_scipys(df: int) -> None:
    assert intervals.t_quantile(df) == pytest.approx(float(sps.t.ppf(0.975, df)), abs=1e-6)


@pytest.mark.parametrize("bounds", [None, (0.0, 1.0), (-1e300, 1e300)])
@pytest.mark.parametrize(("total", "sumsq"), [(2e155, math.inf), (math.inf, math.inf), (-math.inf, math.inf)])
def test_a_sum_past_the_largest_double_gives_no_interval(bounds: tuple[float, float] | None, total: float,
                                                        sumsq: float) -> None:
    """Scores whose squares (or sum) add up past a double have no finite spread to state: no
    interval, never [-inf, inf] nor a NaN-made [inf, inf] (inf - inf in the variance)."""
    assert intervals.mean_interval(3, total, sumsq, bounds, observed=(1.0, 1e155)) is None


def test_the_summary_of_huge_scores_keeps_their_mean_and_states_no_interval() -> None:
    """Two scores of 1e308 sum past the largest double; their mean is still 1e308 (issue 45's ledger
    on PostgreSQL failed the run: "value out of range: overflow"). A score of 1e155's square is
    past it: the mean is stated, the interval is not."""
    def _tally(scores: list[float]) -> Tally:  # the ledger's streaming tally (its sums split: ``SPLITS``)
        folding = Folding()
        folding.add(Batch(rows=len(scores), counts={"status": {"ok": len(scores)}}, scores=scores))
        return folding.tally()

    found = summarize("f", 1, 0.5, _tally([1e308, 1e308]))
    assert found.mean == 1e308 and found.mean_ci is None
    found = summarize("f", 1, 0.5, _tally([1e155, 3.0, -2.0]))
    assert found.mean == pytest.approx(1e155 / 3) and found.mean_ci is None
    found = summarize("f", 1, 0.5, _tally([1e308, 1e308, -1e308, 1.0]))
    assert found.mean == pytest.approx((1e308 + 1.0) / 4) and found.mean_ci is None
