"""Fleiss' κ (studio/core/stats.py, the review queues' reviewers-among-themselves figure) equals a
second, maintained implementation: statsmodels' ``fleiss_kappa`` over the table its own
``aggregate_raters`` builds from the same ratings. Fixtures with ties (even splits within a
sample), unequal use of the categories (one rare, one never used by most raters, skewed
draws), disagreement below chance (negative κ) and the published example."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from studio.core import stats
from studio.core.engine.queues import reviewer_agreement
from studio.core.store.queues import QueueLabel


def _theirs(rows: list[list[str]]) -> float:
    table, _categories = aggregate_raters(np.asarray(rows, dtype=object))
    return float(statsmodels_fleiss(table, method="fleiss"))


def _published() -> list[list[str]]:
    # Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    return [[f"c{c}" for c, count in enumerate(row) for _ in range(count)] for row in table]


def _skewed(seed: int, raters: int, samples: int, probabilities: dict[str, float]) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    classes = list(probabilities)
    return [list(rng.choice(classes, size=raters, p=list(probabilities.values()))) for _ in range(samples)]


FIXTURES = {
    "ties: even splits of four raters": [["PASS", "PASS", "FAIL", "FAIL"], ["PASS", "FAIL", "PASS", "FAIL"],
                                         ["PASS", "PASS", "PASS", "PASS"], ["FAIL", "FAIL", "FAIL", "PASS"],
                                         ["FAIL", "PASS", "FAIL", "PASS"], ["PASS", "PASS", "PASS", "FAIL"]],
    "ties: two raters split on most samples": [["PASS", "FAIL"], ["FAIL", "PASS"], ["PASS", "PASS"],
                                               ["FAIL", "PASS"], ["FAIL", "FAIL"], ["PASS", "FAIL"]],
    "unequal use: NA rare, FAIL common": [["FAIL", "FAIL", "FAIL"], ["FAIL", "FAIL", "NA"], ["FAIL", "PASS", "FAIL"],
                                          ["PASS", "PASS", "PASS"], ["FAIL", "FAIL", "FAIL"], ["FAIL", "FAIL", "PASS"],
                                          ["FAIL", "FAIL", "FAIL"], ["PASS", "FAIL", "FAIL"]],
    "unequal use: a category given once": [["PASS", "PASS", "PASS"], ["PASS", "PASS", "PASS"],
                                           ["PASS", "PASS", "FAIL"], ["PASS", "PASS", "PASS"],
                                           ["FAIL", "PASS", "PASS"], ["PASS", "NA", "PASS"]],
    "below chance: raters always split": [["PASS", "FAIL"], ["FAIL", "PASS"], ["PASS", "FAIL"], ["FAIL", "PASS"]],
    "skewed draws, five raters": _skewed(1, 5, 60, {"PASS": 0.8, "FAIL": 0.15, "NA": 0.05}),
    "skewed draws, three raters, four classes": _skewed(2, 3, 45, {"A": 0.5, "B": 0.3, "C": 0.15, "D": 0.05}),
    "published example": _published(),
}


@pytest.mark.parametrize("rows", list(FIXTURES.values()), ids=list(FIXTURES))
def test_fleiss_kappa_equals_statsmodels(rows: list[list[str]]) -> None:
    ours = stats.fleiss_kappa(rows)
    assert ours.value is not None
    assert ours.value == pytest.approx(_theirs(rows), abs=1e-12)
    # the interval's point is the same figure
    assert stats.fleiss_kappa_interval(rows).value == pytest.approx(ours.value, abs=1e-12)


def test_published_example_and_negative_kappa_are_what_they_should_be() -> None:
    # guards the fixtures: the published value, and a split that agrees less than chance
    assert _theirs(_published()) == pytest.approx(0.2099, abs=1e-4)
    assert _theirs(FIXTURES["below chance: raters always split"]) < 0


def test_a_queues_reviewers_fleiss_kappa_equals_statsmodels() -> None:
    """The queue report's figure: NA labels are left out (no class to agree on), so a sample keeps
    its PASS/FAIL labels; statsmodels is given the same rows."""
    rng = np.random.default_rng(7)
    people = ("ann", "bob", "cy")
    table = {f"s{i}": {who: str(rng.choice(["PASS", "FAIL"], p=[0.7, 0.3])) for who in people} for i in range(30)}
    labels = {sid: {who: QueueLabel(sample_id=sid, reviewer=who, version=1, verdict=v) for who, v in per.items()}
              for sid, per in table.items()}
    report = reviewer_agreement(labels)
    rows = [[per[who] for who in people] for per in table.values()]
    assert report["n_multi"] == 30
    assert report["fleiss_kappa"]["value"] == pytest.approx(_theirs(rows), abs=1e-12)
