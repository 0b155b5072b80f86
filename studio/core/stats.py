"""Agreement statistics: κ, correlations, bootstrap intervals, exact tests (numpy/scipy, no Qt).

Why a module of its own: the agreement view, ``grader-studio agreement``, ``compare``, ``run
--repeat`` and ``align`` all report the same numbers, and each must be stated honestly: a value
that is undefined (κ when both raters use one class, a correlation of a constant) comes back as
``Stat(value=None, reason=...)``, never as 0; every estimate carries its n and, where asked, a
seeded percentile-bootstrap 95% interval. Ranks, correlations and the binomial test are scipy's.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from studio.core.json_types import JsonObject

from .intervals import wilson

BOOTSTRAP_RESAMPLES = 2000
DEFAULT_SEED = 20261123


@dataclass
class Stat:
    """One estimate: the value (None when undefined, with the reason) and its interval."""

    value: float | None
    reason: str | None = None
    ci: tuple[float, float] | None = None
    extra: JsonObject = field(default_factory=dict)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def ci_list(self) -> list[float] | None:
        return None if self.ci is None else [self.ci[0], self.ci[1]]


def landis_koch(kappa: float | None) -> str | None:
    """Landis & Koch (1977)'s reading of a κ value."""
    if kappa is None:
        return None
    if kappa < 0:
        return "poor (worse than chance)"
    for bound, name in ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial")):
        if kappa <= bound:
            return name
    return "almost perfect"


# --- nominal agreement ---------------------------------------------------------------------------
def confusion(human: Sequence[Hashable], judge: Sequence[Hashable], classes: Sequence[Hashable]) -> np.ndarray:
    """Counts with the human's class as the row and the judge's as the column."""
    index = {c: i for i, c in enumerate(classes)}
    matrix = np.zeros((len(classes), len(classes)), dtype=np.int64)
    for h, j in zip(human, judge, strict=True):
        matrix[index[h], index[j]] += 1
    return matrix


def kappa_from_confusion(matrix: np.ndarray, weights: np.ndarray | None = None) -> Stat:
    """Cohen's κ (weighted when ``weights`` gives the disagreement weight of each cell)."""
    n = matrix.sum()
    if n == 0:
        return Stat(None, "no samples to compare")
    k = matrix.shape[0]
    w = 1.0 - np.eye(k) if weights is None else weights
    observed = matrix / n
    expected = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / (n * n)
    disagreement_expected = float((w * expected).sum())
    if disagreement_expected <= 1e-15:
        return Stat(None, "undefined: both sides give a single class, so chance agreement is total "
                          "(κ = 0/0)")
    return Stat(1.0 - float((w * observed).sum()) / disagreement_expected)


def _kappa_batch(codes_h: np.ndarray, codes_j: np.ndarray, k: int, weights: np.ndarray | None) -> np.ndarray:
    """κ of each resample row at once (rows of class codes); NaN where undefined."""
    rows, n = codes_h.shape
    flat = (codes_h * k + codes_j) + (np.arange(rows)[:, None] * k * k)
    counts = np.bincount(flat.ravel(), minlength=rows * k * k).reshape(rows, k, k) / n
    w = 1.0 - np.eye(k) if weights is None else weights
    expected = counts.sum(axis=2)[:, :, None] * counts.sum(axis=1)[:, None, :]
    de = (w * expected).sum(axis=(1, 2))
    do = (w * counts).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = 1.0 - do / de
    out[de <= 1e-15] = np.nan
    return out


def cohen_kappa(human: Sequence[Hashable], judge: Sequence[Hashable], classes: Sequence[Hashable], *,
                weights: str | None = None, ci: bool = True, seed: int = DEFAULT_SEED,
                resamples: int = BOOTSTRAP_RESAMPLES) -> Stat:
    """Cohen's κ over ``classes`` (ordered; ``weights='quadratic'`` for an ordinal scale), with a
    percentile bootstrap interval over samples (resamples where κ is undefined are left out and
    counted in ``extra['undefined_resamples']``)."""
    k = len(classes)
    w = None
    if weights == "quadratic":
        grid = np.arange(k)
        w = ((grid[:, None] - grid[None, :]) ** 2) / max((k - 1) ** 2, 1)
    index = {c: i for i, c in enumerate(classes)}
    h = np.array([index[x] for x in human], dtype=np.int64)
    j = np.array([index[x] for x in judge], dtype=np.int64)
    result = kappa_from_confusion(confusion_codes(h, j, k), w)
    if not ci or not result.defined or len(h) < 2:
        return result
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(h), size=(resamples, len(h)))
    values = _kappa_batch(h[picks], j[picks], k, w)
    return _with_interval(result, values)


def confusion_codes(h: np.ndarray, j: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(h * k + j, minlength=k * k).reshape(k, k)


def _with_interval(result: Stat, values: np.ndarray) -> Stat:
    defined = values[~np.isnan(values)]
    result.extra["undefined_resamples"] = int(len(values) - len(defined))
    if len(defined) >= 0.5 * len(values) and len(defined) > 0:
        low, high = np.percentile(defined, [2.5, 97.5])
        result.ci = (float(low), float(high))
    else:
        result.extra["ci_reason"] = "most bootstrap resamples are undefined"
    return result


def bootstrap(statistic: Callable[..., float | None], *columns: Sequence[float] | np.ndarray, seed: int = DEFAULT_SEED,
              resamples: int = 1000) -> tuple[tuple[float, float] | None, int]:
    """Paired percentile bootstrap 95% interval of ``statistic(*columns)`` (resampling rows)."""
    arrays = [np.asarray(c, dtype=float) for c in columns]
    n = len(arrays[0])
    if n < 2:
        return None, 0
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    for r in range(resamples):
        pick = rng.integers(0, n, size=n)
        value = statistic(*(a[pick] for a in arrays))
        values[r] = np.nan if value is None else value
    defined = values[~np.isnan(values)]
    undefined = int(resamples - len(defined))
    if len(defined) < 0.5 * resamples:
        return None, undefined
    low, high = np.percentile(defined, [2.5, 97.5])
    return (float(low), float(high)), undefined


# --- scores ---------------------------------------------------------------------------------------
def _constant(values: np.ndarray) -> bool:
    return len(values) == 0 or bool(np.all(values == values[0]))


def _corr(kind: str, x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2 or _constant(x) or _constant(y):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "spearman":
            value = sps.spearmanr(x, y).statistic  # average ranks for ties
        elif kind == "kendall":
            value = sps.kendalltau(x, y, variant="b").statistic
        else:
            value = sps.pearsonr(x, y).statistic
    value = float(value)
    return None if math.isnan(value) else value


def correlation(kind: str, x: Sequence[float], y: Sequence[float], *, ci: bool = True,
                seed: int = DEFAULT_SEED, resamples: int = 1000) -> Stat:
    """``spearman`` (average ranks for ties), ``kendall`` (τ-b) or ``pearson``, with a bootstrap CI."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    value = _corr(kind, xa, ya)
    if value is None:
        reason = "fewer than 2 pairs" if len(xa) < 2 else "undefined: one side is constant"
        return Stat(None, reason)
    result = Stat(value)
    if ci:
        rng = np.random.default_rng(seed)
        picks = rng.integers(0, len(xa), size=(resamples, len(xa)))
        return _with_interval(result, _corr_batch(kind, xa[picks], ya[picks]))
    return result


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = (xc * yc).sum(axis=1) / denominator
    out[denominator <= 1e-15] = np.nan  # a constant resample: undefined
    return out


def _corr_batch(kind: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The correlation of each resample row at once (the bootstrap's inner loop, vectorised)."""
    if kind == "pearson":
        return _pearson_rows(x, y)
    if kind == "spearman":
        return _pearson_rows(sps.rankdata(x, axis=1), sps.rankdata(y, axis=1))
    out = np.empty(len(x))
    if x.shape[1] > 200:  # scipy's O(n log n) τ-b; the n×n table below is quicker only when small
        for r in range(len(x)):
            out[r] = np.nan if _constant(x[r]) or _constant(y[r]) else sps.kendalltau(x[r], y[r]).statistic
        return out
    for r in range(len(x)):  # τ-b from its definition, one n×n sign table per resample
        sx = np.sign(x[r][:, None] - x[r][None, :])
        sy = np.sign(y[r][:, None] - y[r][None, :])
        pairs_x, pairs_y = float((sx != 0).sum()), float((sy != 0).sum())
        out[r] = (sx * sy).sum() / math.sqrt(pairs_x * pairs_y) if pairs_x and pairs_y else np.nan
    return out


def mean_absolute_error(x: Sequence[float], y: Sequence[float], *, seed: int = DEFAULT_SEED) -> Stat:
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xa) == 0:
        return Stat(None, "no samples to compare")
    result = Stat(float(np.mean(np.abs(xa - ya))))
    result.ci, _ = bootstrap(lambda a, b: float(np.mean(np.abs(a - b))), xa, ya, seed=seed)
    return result


def mean_difference(a: Sequence[float], b: Sequence[float], *, seed: int = DEFAULT_SEED) -> Stat:
    """Mean of ``b - a`` over paired samples, with a paired bootstrap interval."""
    aa, ba = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(aa) == 0:
        return Stat(None, "no samples in common")
    result = Stat(float(np.mean(ba - aa)))
    result.ci, _ = bootstrap(lambda x, y: float(np.mean(y - x)), aa, ba, seed=seed)
    return result


# --- paired binary outcomes -----------------------------------------------------------------------
def mcnemar_exact(only_a: int, only_b: int) -> Stat:
    """McNemar's exact test: two-sided binomial test of the discordant pairs against 1/2."""
    discordant = only_a + only_b
    if discordant == 0:
        return Stat(1.0, "no discordant pairs: the two runs never disagree on pass/fail")
    return Stat(float(sps.binomtest(only_a, discordant, 0.5).pvalue))


# --- self-agreement of repeated grading -----------------------------------------------------------
def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> Stat:
    """Fleiss' κ: each row is one sample's N repeated verdicts (the same N for every row)."""
    rows = [list(r) for r in ratings]
    if not rows:
        return Stat(None, "no samples graded more than once")
    n = len(rows[0])
    if n < 2 or any(len(r) != n for r in rows):
        return Stat(None, "every sample needs the same number (at least 2) of verdicts")
    categories = sorted({v for r in rows for v in r}, key=str)
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(rows), len(categories)))
    for i, r in enumerate(rows):
        for v in r:
            counts[i, index[v]] += 1
    p_j = counts.sum(axis=0) / (len(rows) * n)
    p_i = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
    p_bar, p_e = float(p_i.mean()), float((p_j * p_j).sum())
    if p_e >= 1.0 - 1e-15:
        return Stat(None, "undefined: every verdict is the same class (chance agreement is total)")
    return Stat((p_bar - p_e) / (1.0 - p_e))


def krippendorff_alpha_interval(units: Sequence[Sequence[float | None]]) -> Stat:
    """Krippendorff's α for interval data; each row is one unit's values (None = missing).
    Units with fewer than two values are not pairable and left out, as α prescribes."""
    pairable = [[float(v) for v in u if v is not None and not math.isnan(v)] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    if not pairable:
        return Stat(None, "no unit has two or more values")
    n = sum(len(u) for u in pairable)
    observed = 0.0
    for u in pairable:
        arr = np.asarray(u)
        observed += float(((arr[:, None] - arr[None, :]) ** 2).sum()) / (len(u) - 1)
    observed /= n
    everything = np.concatenate([np.asarray(u) for u in pairable])
    # Σ over all ordered pairs of distinct values: 2·n·Σ(x - mean)²
    expected = 2.0 * n * float(((everything - everything.mean()) ** 2).sum()) / (n * (n - 1))
    if expected <= 1e-15:
        return Stat(None, "undefined: every value is the same (no variation to agree on)")
    return Stat(1.0 - observed / expected)


# --- judges' bias probes and juries ----------------------------------------------------------------
def proportion(successes: int, n: int) -> Stat:
    """A share with its Wilson 95% score interval (sound near 0 and 1, where a normal one is not;
    core/intervals.py, the one the run summary's 0/1 means use too)."""
    ci = wilson(successes, n)
    if ci is None:
        return Stat(None, "no samples")
    return Stat(successes / n, ci=ci, extra={"n": n})


def resample_chunks(n: int, resamples: int, seed: int, chunk_cells: int = 2_000_000) -> Iterator[np.ndarray]:
    """Index arrays (rows of resampled row numbers), a few resamples at a time to bound memory."""
    rng = np.random.default_rng(seed)
    per_chunk = max(1, chunk_cells // max(n, 1))
    done = 0
    while done < resamples:
        size = min(per_chunk, resamples - done)
        yield rng.integers(0, n, size=(size, n))
        done += size


def fleiss_kappa_interval(ratings: Sequence[Sequence[Hashable]], *, seed: int = DEFAULT_SEED,
                          resamples: int = 500) -> Stat:
    """Fleiss' κ with a percentile bootstrap interval over samples (rows), vectorised: a run's
    aggregates compute it for every jury run, thousands of samples included."""
    rows = [list(r) for r in ratings]
    result = fleiss_kappa(rows)
    if not result.defined or len(rows) < 2:
        return result
    n = len(rows[0])
    categories = sorted({v for r in rows for v in r}, key=str)
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(rows), len(categories)))
    for i, r in enumerate(rows):
        for v in r:
            counts[i, index[v]] += 1
    p_i = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
    values = []
    for picks in resample_chunks(len(rows), resamples, seed):
        p_bar = p_i[picks].mean(axis=1)
        p_j = np.stack([counts[:, j][picks].sum(axis=1) for j in range(len(categories))], axis=1) / (len(rows) * n)
        p_e = (p_j * p_j).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = (p_bar - p_e) / (1.0 - p_e)
        kappa[p_e >= 1.0 - 1e-15] = np.nan
        values.append(kappa)
    return _with_interval(result, np.concatenate(values))


def krippendorff_alpha_with_interval(units: Sequence[Sequence[float | None]], *, seed: int = DEFAULT_SEED,
                                     resamples: int = 500) -> Stat:
    """Krippendorff's α (interval) with a percentile bootstrap interval over units, vectorised from
    each unit's sufficient statistics (count, sum, sum of squares, within-unit disagreement)."""
    pairable = [[float(v) for v in u if v is not None and not math.isnan(v)] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    if not pairable:
        return krippendorff_alpha_interval(units)  # undefined, with its reason
    m = np.array([len(u) for u in pairable], dtype=float)
    s1 = np.array([sum(u) for u in pairable])
    s2 = np.array([sum(x * x for x in u) for u in pairable])
    # Σ_i Σ_j (x_i - x_j)² = 2·m·Σ(x - mean)²; each unit weighs 1/(m - 1)
    within = 2.0 * m * (s2 - s1 * s1 / m) / (m - 1)
    total = m.sum()
    expected = 2.0 * (s2.sum() - s1.sum() ** 2 / total) / (total - 1)
    # the spread comes from a difference of sums: a constant set leaves rounding, not variation
    tiny = 1e-12 * max(1.0, float(s2.sum() / total))
    if expected <= tiny:
        return Stat(None, "undefined: every value is the same (no variation to agree on)")
    result = Stat(float(1.0 - within.sum() / total / expected))
    if len(pairable) < 2:
        return result
    values = []
    for picks in resample_chunks(len(pairable), resamples, seed):
        total = m[picks].sum(axis=1)
        observed = within[picks].sum(axis=1) / total
        spread = s2[picks].sum(axis=1) - s1[picks].sum(axis=1) ** 2 / total
        expected = 2.0 * spread / (total - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = 1.0 - observed / expected
        alpha[expected <= tiny] = np.nan
        values.append(alpha)
    return _with_interval(result, np.concatenate(values))


def with_interval(result: Stat, values: np.ndarray) -> Stat:
    """``result`` with the percentile interval of bootstrap ``values`` (NaN = undefined resample)."""
    return _with_interval(result, values)
