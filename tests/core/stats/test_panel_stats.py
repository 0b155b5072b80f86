"""Wilson intervals, bootstrap intervals of Fleiss' κ and Krippendorff's α, and the pairwise run summary."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from studio.core import stats
from studio.core.store.panel_stats import jury_summary, pairwise_summary


@pytest.mark.parametrize(("k", "n"), [(0, 10), (5, 10), (10, 10), (3, 40)])
def test_proportion_is_the_wilson_interval(k: int, n: int) -> None:
    share = stats.proportion(k, n)
    low, high = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert share.value == k / n
    assert share.ci == pytest.approx((low, high), abs=1e-9)


def test_a_share_of_nothing_is_undefined_not_zero() -> None:
    assert stats.proportion(0, 0).value is None


def test_bootstrap_intervals_hold_the_estimate() -> None:
    rows = [["PASS", "PASS", "FAIL"], ["FAIL", "FAIL", "FAIL"], ["PASS", "PASS", "PASS"], ["PASS", "FAIL", "FAIL"],
            ["FAIL", "FAIL", "PASS"], ["PASS", "PASS", "PASS"]]
    kappa = stats.fleiss_kappa_interval(rows)
    assert kappa.value == stats.fleiss_kappa(rows).value and kappa.ci is not None
    assert kappa.ci[0] <= kappa.value <= kappa.ci[1]
    units = [[1.0, 0.8, None], [0.0, 0.2, 0.1], [0.5, 0.5, 0.6], [0.9, None, 1.0]]
    alpha = stats.krippendorff_alpha_with_interval(units)
    assert alpha.value == pytest.approx(stats.krippendorff_alpha_interval(units).value, abs=1e-12)
    assert stats.fleiss_kappa_interval([["PASS", "PASS"]] * 4).value is None  # one class: undefined


def test_pairwise_summary_counts_each_verdict_and_the_first_position_rate() -> None:
    # (sample verdict, picks of the first-shown answer, decisive order verdicts)
    rows = [("A", 1, 2), ("A", 1, 2), ("B", 1, 2), ("TIE", 0, 0), ("inconsistent", 2, 2)]
    summary = pairwise_summary(rows)
    assert summary["pairwise"] == {"win_a": 0.4, "win_b": 0.2, "tie": 0.2, "inconsistent": 0.2,
                                   "position_consistency": 0.8, "first_position_rate": 5 / 8}
    assert summary["pairwise_n"] == 5
    assert all(lo <= summary["pairwise"][k] <= hi for k, (lo, hi) in summary["pairwise_ci"].items())
    only_ties = pairwise_summary([("TIE", 0, 0)] * 3)
    assert only_ties["pairwise"]["first_position_rate"] is None
    assert "tie" in only_ties["pairwise_undefined"]["first_position_rate"]


def test_jury_summary_leaves_a_failed_juror_out_of_kappa_but_counts_it() -> None:
    def juror(name: str, status: str, verdict: str | None, score: float | None) -> dict[str, object]:
        return {"name": name, "status": status, "verdict": verdict, "score": score, "prompt_tokens": 10,
                "completion_tokens": 2}

    panels = [{"jurors": [juror("a", "ok", "PASS", 1.0), juror("b", "ok", "PASS", 1.0)]},
              {"jurors": [juror("a", "ok", "FAIL", 0.0), juror("b", "error", None, None)]},
              {"jurors": [juror("a", "ok", "FAIL", 0.0), juror("b", "ok", "FAIL", 0.0)]}]
    summary = jury_summary(panels)
    assert summary["fleiss_kappa_n"] == 2 and summary["fleiss_kappa"] == pytest.approx(1.0)
    assert summary["per_juror"]["b"]["failed"] == 1 and summary["per_juror"]["a"]["answered"] == 3
    assert summary["per_juror"]["a"]["prompt_tokens"] == 30


def test_vectorised_bootstraps_equal_the_statistic_on_each_resample() -> None:
    """Same resamples, computed one by one from the definitions: the intervals are identical."""
    import numpy as np

    rng = np.random.default_rng(7)
    rows = [[str(v) for v in rng.choice(["PASS", "FAIL", "NA"], size=3, p=[0.5, 0.4, 0.1])] for _ in range(40)]
    units = [[float(v) if rng.random() > 0.2 else None for v in rng.normal(size=3)] for _ in range(40)]
    for fast, slow, data in ((stats.fleiss_kappa_interval, stats.fleiss_kappa, rows),
                             (stats.krippendorff_alpha_with_interval, stats.krippendorff_alpha_interval, units)):
        kept = data if slow is stats.fleiss_kappa else [u for u in data if sum(v is not None for v in u) >= 2]
        values = []
        for picks in stats.resample_chunks(len(kept), 500, stats.DEFAULT_SEED):
            for pick in picks:
                value = slow([kept[i] for i in pick]).value
                values.append(np.nan if value is None else value)
        expected = np.percentile(np.array(values)[~np.isnan(values)], [2.5, 97.5])
        assert fast(data).ci == pytest.approx(tuple(expected), abs=1e-9)
        assert fast(data).value == pytest.approx(slow(data).value, abs=1e-12)


def test_alpha_of_constant_scores_is_undefined_not_one() -> None:
    assert stats.krippendorff_alpha_with_interval([[0.7, 0.7, 0.7]] * 50).value is None
    assert stats.krippendorff_alpha_with_interval([[0.1, 0.1, 0.1]] * 7 + [[0.3, 0.3]] * 3).value == pytest.approx(1.0)
