"""95% intervals that stay in the score's range: a proportion's (Wilson) and a mean's.

Why a module of its own, in plain Python: every surface that states an interval of a run's mean
(``run``, ``runs show``, ``runs report``, the markdown and JUnit reports, the window's band) reads
``engine/summary.py``, which reads ``mean_interval`` here; the agreement statistics (``stats.py``)
read ``wilson`` for their shares. Both sit on a run's path to its summary, so they import no numpy
or scipy (scipy alone costs a run more time to import than it takes to grade a small dataset).

The rule (DESIGN: statistics are honest): an interval never leaves the range the score can take.
The normal approximation (mean ± 1.96·sd/√n) did: 0/1 scores at small n gave [0.25, 1.08].

* **Two-valued scores** (every score at one end of the range: 0/1 pass/fail graders, a range
  judge that only said 1 or 5, a function grader that returns only 0 and 1) are a proportion: the
  Wilson score interval of the share at the top end, mapped back onto the range. Wilson's interval
  lies in [0, 1] by construction, is defined at n = 1 and keeps its coverage near 0 and 1, where
  the normal one collapses to a point (0/20 gives [0, 0]) or overshoots.
* **Other bounded scores**: Student's t interval of the mean (n − 1 degrees of freedom; wider
  than the normal one at small n, as it should be), clipped to [low, high]. Why clipping and not
  Wilson on the rescaled mean: Wilson's width comes from the binomial variance p(1 − p)/n, which
  overstates the spread of continuous scores (all near 0.5 give a narrow t interval, a wide
  Wilson one), so it would not be the mean's interval. Clipping only cuts off values the mean
  cannot take, so the clipped interval covers the true mean at least as often as the t interval.
  At n = 1 the t interval is unbounded and its clip is the whole range: one score says nothing of
  the spread.
* **Unbounded scores** (a function grader without declared bounds): the t interval as it is (there
  is no range to leave); None below 2 scores.

Kinds declare their range (``score_range`` in store/suites.py: the kind's ``SCORE_BOUNDS``); a
grader that declares none but whose every score is 0 or 1 is treated as 0/1 (its scores are
pass/fail, and a t interval would leave [0, 1] at small n, which is issue 45's report).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054

WILSON = "Wilson score interval, 95%"
T_CLIPPED = "Student t interval of the mean, 95%, clipped to the score range"
T_PLAIN = "Student t interval of the mean, 95%"


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    #: how it was computed (one of the names above), as ``run --json`` states it
    method: str

    def pair(self) -> tuple[float, float]:
        return self.low, self.high


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes`` out of ``n`` (None for n = 0); within [0, 1]."""
    if n <= 0:
        return None
    p = min(1.0, max(0.0, successes / n))
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # the interval holds p exactly; rounding of centre ± half must not push either end past it
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def t_quantile(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` ≥ 1 degrees of freedom, without scipy: the
    Cornish–Fisher expansion about the normal quantile (Abramowitz & Stegun 26.7.5; within 1e-7 of
    the exact value from df = 30 on), refined below that by Newton's method on the exact finite
    series of t's distribution for an integer df (A&S 26.7.3-4). tests/core/test_intervals.py holds
    it against scipy."""
    if df < 1:
        raise ValueError("Student's t needs at least 1 degree of freedom")
    z = Z95
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    t = z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4
    if df >= 30:
        return t
    density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    for _ in range(50):
        step = (_central_mass(t, df) - 0.95) / (2 * density * (1 + t * t / df) ** (-(df + 1) / 2))
        t -= step
        if abs(step) < 1e-13 * t:
            break
    return t


def _central_mass(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with an integer ``df`` (A&S 26.7.3 odd, 26.7.4 even)."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:
        term = math.cos(theta)
        acc = term if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= c2 * (k - 1) / k
            acc += term
        return 2 / math.pi * (theta + s * acc)
    term = acc = 1.0
    for k in range(2, df - 1, 2):
        term *= c2 * (k - 1) / k
        acc += term
    return s * acc


def two_valued(n: int, total: float, sumsq: float, low: float, high: float) -> bool:
    """Every one of ``n`` scores in [low, high] is ``low`` or ``high``, read from their sum and sum
    of squares: Σ(x − low)(high − x) ≥ 0 term by term, and is 0 only when each term is."""
    if n <= 0 or high <= low:
        return False
    spread = (low + high) * total - sumsq - n * low * high
    return abs(spread) <= 1e-9 * n * (high - low) ** 2


def mean_interval(n: int, total: float, sumsq: float, bounds: tuple[float, float] | None = None, *,
                  observed: tuple[float | None, float | None] = (None, None)) -> Interval | None:
    """The 95% interval of the mean of ``n`` scores from their sum and sum of squares (the run's
    tally), by the rule in the module's docstring. ``bounds``: the range the grader's scores can
    take (None: any finite number); ``observed``: the smallest and largest score seen (to tell
    0/1 scores of a grader without declared bounds). None when there is no interval (n = 0,
    fewer than 2 unbounded scores, or a sum or sum of squares that is not finite: scores whose
    squares add up past the largest double have a spread no double states, and inf − inf would
    make a NaN of the variance)."""
    if n <= 0 or not (math.isfinite(total) and math.isfinite(sumsq)):
        return None  # a sum past the largest double: no finite spread, so no interval to state
    if bounds is None:
        smallest, largest = observed
        if smallest is not None and largest is not None and smallest >= 0.0 and largest <= 1.0 \
                and two_valued(n, total, sumsq, 0.0, 1.0):
            bounds = (0.0, 1.0)
    mean = total / n
    if bounds is not None:
        low, high = float(bounds[0]), float(bounds[1])
        mean = min(high, max(low, mean))
        if two_valued(n, total, sumsq, low, high):
            share = wilson((total - n * low) / (high - low), n)
            assert share is not None  # n > 0
            lo, hi = low + share[0] * (high - low), low + share[1] * (high - low)
            return Interval(max(low, min(mean, lo)), min(high, max(mean, hi)), WILSON)
        if n < 2:
            return Interval(low, high, T_CLIPPED)
        half = _t_half(n, total, sumsq)
        return Interval(max(low, mean - half), min(high, mean + half), T_CLIPPED)
    if n < 2:
        return None
    half = _t_half(n, total, sumsq)
    return Interval(mean - half, mean + half, T_PLAIN)


def _t_half(n: int, total: float, sumsq: float) -> float:
    mean = total / n
    variance = max(0.0, (sumsq - n * mean * mean) / (n - 1))
    return t_quantile(n - 1) * math.sqrt(variance / n)
