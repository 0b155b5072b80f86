"""Every statistic of studio.core.stats against a second implementation (scikit-learn, the
krippendorff package, or a textbook formula written out here), on data with ties and on the
degenerate one-class case, where the value is undefined (None with a reason), never 0."""

from __future__ import annotations

import math
import random
import warnings
from itertools import combinations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from studio.core import stats

CLASSES = ("PASS", "FAIL")


def _random_pairs(seed: int, n: int, agree: float) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    human = [rng.choice(CLASSES) for _ in range(n)]
    judge = [h if rng.random() < agree else rng.choice(CLASSES) for h in human]
    return human, judge


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_matches_scikit_learn(seed: int) -> None:
    human, judge = _random_pairs(seed, 40 + seed * 7, 0.7)
    ours = stats.cohen_kappa(human, judge, CLASSES, seed=seed)
    assert ours.value == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    low, high = ours.ci
    assert low <= ours.value <= high


def test_kappa_interval_is_reproducible_with_its_seed_and_moves_with_another() -> None:
    human, judge = _random_pairs(1, 60, 0.6)
    a = stats.cohen_kappa(human, judge, CLASSES, seed=7)
    b = stats.cohen_kappa(human, judge, CLASSES, seed=7)
    c = stats.cohen_kappa(human, judge, CLASSES, seed=8)
    assert a.ci == b.ci and a.ci != c.ci


def test_kappa_of_one_class_is_undefined_not_zero() -> None:
    human = ["PASS"] * 12
    judge = ["PASS"] * 12
    ours = stats.cohen_kappa(human, judge, CLASSES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score(human, judge)
    assert math.isnan(theirs)
    assert ours.value is None and ours.ci is None
    assert "undefined" in (ours.reason or "")


def test_kappa_when_only_the_judge_is_constant_is_defined_and_zero() -> None:
    human = ["PASS", "FAIL", "PASS", "FAIL", "PASS"]
    judge = ["PASS"] * 5
    assert stats.cohen_kappa(human, judge, CLASSES).value == pytest.approx(cohen_kappa_score(human, judge))


@pytest.mark.parametrize("seed", range(4))
def test_quadratic_weighted_kappa_matches_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    human = [rng.randint(1, 5) for _ in range(50)]
    judge = [min(5, max(1, h + rng.choice((-2, -1, 0, 0, 0, 1)))) for h in human]
    ours = stats.cohen_kappa(human, judge, [1, 2, 3, 4, 5], weights="quadratic", seed=seed)
    assert ours.value == pytest.approx(
        cohen_kappa_score(human, judge, labels=[1, 2, 3, 4, 5], weights="quadratic"), abs=1e-12)


# --- correlations, written out from their definitions ---------------------------------------------
def _average_ranks(values: list[float]) -> list[float]:
    ranks = [0.0] * len(values)
    ordered = sorted(range(len(values)), key=lambda i: values[i])
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and values[ordered[j + 1]] == values[ordered[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[ordered[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def _kendall_tau_b(x: list[float], y: list[float]) -> float:
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / math.sqrt(
        (concordant + discordant + ties_x) * (concordant + discordant + ties_y))


TIED_HUMAN = [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 1, 2, 3, 4, 5, 3, 3, 2]
TIED_JUDGE = [0.0, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 1.0, 1.0, 0.75, 0.25, 0.25, 0.5, 0.5, 1.0, 0.25, 0.5, 0.5]


def test_spearman_uses_average_ranks_for_ties() -> None:
    ours = stats.correlation("spearman", TIED_HUMAN, TIED_JUDGE)
    expected = _pearson(_average_ranks(TIED_HUMAN), _average_ranks(TIED_JUDGE))
    assert ours.value == pytest.approx(expected, abs=1e-12)
    assert ours.ci[0] <= ours.value <= ours.ci[1]


def test_kendall_is_tau_b_with_ties() -> None:
    assert stats.correlation("kendall", TIED_HUMAN, TIED_JUDGE).value == pytest.approx(
        _kendall_tau_b(TIED_HUMAN, TIED_JUDGE), abs=1e-12)


def test_pearson_and_mae() -> None:
    assert stats.correlation("pearson", TIED_HUMAN, TIED_JUDGE).value == pytest.approx(
        _pearson(TIED_HUMAN, TIED_JUDGE), abs=1e-12)
    mapped = [1 + 4 * s for s in TIED_JUDGE]
    mae = stats.mean_absolute_error(TIED_HUMAN, mapped)
    assert mae.value == pytest.approx(sum(abs(a - b) for a, b in zip(TIED_HUMAN, mapped, strict=True)) / len(mapped))


@pytest.mark.parametrize("kind", ["spearman", "kendall", "pearson"])
def test_correlation_of_a_constant_is_undefined(kind: str) -> None:
    result = stats.correlation(kind, [3, 3, 3, 3], [0.1, 0.5, 0.9, 0.2])
    assert result.value is None and "constant" in (result.reason or "")


# --- paired tests and self-agreement --------------------------------------------------------------
@pytest.mark.parametrize(("only_a", "only_b"), [(0, 5), (3, 9), (7, 7), (1, 0), (12, 2)])
def test_mcnemar_exact_is_the_two_sided_binomial_tail(only_a: int, only_b: int) -> None:
    n = only_a + only_b
    k = min(only_a, only_b)
    expected = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)
    assert stats.mcnemar_exact(only_a, only_b).value == pytest.approx(expected, abs=1e-12)


def test_mcnemar_with_no_discordant_pair_says_so() -> None:
    result = stats.mcnemar_exact(0, 0)
    assert result.value == 1.0 and "no discordant" in (result.reason or "")


def _fleiss_by_hand(rows: list[list[str]]) -> float:
    n = len(rows[0])
    categories = sorted({v for r in rows for v in r})
    total = len(rows) * n
    p_j = [sum(r.count(c) for r in rows) / total for c in categories]
    p_i = [(sum(r.count(c) ** 2 for c in categories) - n) / (n * (n - 1)) for r in rows]
    p_bar = sum(p_i) / len(rows)
    p_e = sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


def test_fleiss_kappa_matches_the_published_example_and_the_formula() -> None:
    # Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories -> κ = 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    rows = [[str(c) for c, count in enumerate(row) for _ in range(count)] for row in table]
    assert stats.fleiss_kappa(rows).value == pytest.approx(0.2099, abs=1e-4)
    rng = random.Random(3)
    verdicts = [[rng.choice(("PASS", "FAIL", "NA")) for _ in range(4)] for _ in range(30)]
    assert stats.fleiss_kappa(verdicts).value == pytest.approx(_fleiss_by_hand(verdicts), abs=1e-12)


def test_fleiss_kappa_of_one_class_is_undefined() -> None:
    result = stats.fleiss_kappa([["PASS", "PASS", "PASS"]] * 5)
    assert result.value is None and "undefined" in (result.reason or "")


def test_krippendorff_alpha_matches_the_krippendorff_package_with_missing_values() -> None:
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, size=25).astype(float)
    units = []
    for value in truth:
        row = [float(value + rng.choice((-1, 0, 0, 1))) for _ in range(3)]
        if rng.random() < 0.2:
            row[rng.integers(0, 3)] = None  # NA: missing, not zero
        units.append(row)
    units.append([2.0, None, None])  # unpairable: left out
    matrix = np.array([[np.nan if v is None else v for v in u] for u in units]).T  # raters x units
    theirs = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert stats.krippendorff_alpha_interval(units).value == pytest.approx(theirs, abs=1e-10)


def test_krippendorff_alpha_without_variation_is_undefined() -> None:
    result = stats.krippendorff_alpha_interval([[1.0, 1.0], [1.0, 1.0, 1.0]])
    assert result.value is None and "undefined" in (result.reason or "")


def test_landis_koch_reading() -> None:
    assert stats.landis_koch(None) is None
    assert stats.landis_koch(-0.1).startswith("poor")
    assert [stats.landis_koch(k) for k in (0.1, 0.3, 0.5, 0.7, 0.9)] == [
        "slight", "fair", "moderate", "substantial", "almost perfect"]
