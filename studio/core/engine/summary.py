"""The one summary of a grader's results: mean, interval, pass rate, counts, tokens and cost.

Why a module of its own: stdout, ``--json``, markdown, JUnit, GitHub annotations, ``runs show`` and
``runs report`` and the window's summary band all state a run's numbers, and when each computed its
own they disagreed (two different 95% intervals for the same grader; a mean over one grader's rows
printed next to a "metric" over the suite's overall rows). Every number a surface shows of a run is
read from ``GraderSummary`` here, computed from the stored results (store/run_graders ``tally``,
which counts with the pass rule's own SQL; a completed run's tally is counted once at its end and
stored, ``run_graders.STORED_KEY``), so a stopped run, a resumed one and a finished one report the
same numbers wherever they are read.

The interval is the 95% interval of the mean of the scored results (status ok or invalid, the
invalid as the 0 they were given) that stays in the grader's score range (core/intervals.py: Wilson
for two-valued scores such as 0/1, else Student's t clipped to the range); ``interval_method`` names
the one used.
The pass rate is pass / (pass + fail) by the pass rule (models/pass_rule); NA and errors are left
out of both (their counts are kept). Its 95% interval is Wilson's (``pass_rate_ci``, in [0, 1],
defined from one graded result; none without one: NA is not 0%).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict

from studio.core import intervals
from studio.core.json_types import JsonObject, JsonValue
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD
from studio.core.store.ledger import SPLITS, Tally

if TYPE_CHECKING:
    from studio.core.models import RunInfo
    from studio.core.store import Library
    from studio.core.store.runs import RowFacts

#: what a summary without an interval (no scored result) says of its method
INTERVAL_METHOD = intervals.T_PLAIN


class GraderSummary(BaseModel):
    """One grader's results in a run (or a suite's overall score), every figure a surface shows."""

    model_config = ConfigDict(defer_build=True)

    key: str
    version: int
    threshold: float
    weight: float = 1.0
    #: results stored for this grader (every status)
    total: int
    #: scored results: the mean's n (status ok or invalid with a score)
    n: int
    mean: float | None
    mean_ci: tuple[float, float] | None
    interval_method: str = INTERVAL_METHOD
    pass_rate: float | None
    #: the pass rate's 95% Wilson interval (passes out of pass + fail); None without a graded result
    pass_rate_ci: tuple[float, float] | None = None
    score_min: float | None = None
    score_max: float | None = None
    #: by status: ok, error, invalid, na (a skipped result: a judge's NA)
    counts: dict[str, int]
    #: by the pass rule: pass, fail, na, error
    decisions: dict[str, int]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cached: int = 0
    mean_duration_ms: float | None = None
    #: exact USD as a string (None when the grader's endpoint has no prices or it spent nothing)
    cost: str | None = None

    @property
    def label(self) -> str:
        return f"{self.key} v{self.version}"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def aggregates_json(self) -> JsonObject:
        """The ``aggregates`` object of ``run --json`` (kept from before: mean, mean_ci, pass_rate, n)."""
        low, high = self.mean_ci if self.mean_ci is not None else (None, None)
        return {"mean": self.mean, "mean_ci": [low, high], "interval": self.interval_method,
                "pass_rate": self.pass_rate, "pass_rate_ci": None if self.pass_rate_ci is None else list(self.pass_rate_ci),
                "pass_threshold": self.threshold, "n": self.n,
                "min": self.score_min, "max": self.score_max}

    def to_json(self) -> JsonObject:
        """One grader under ``run --json``'s "graders" (and a suite's "overall")."""
        return {"key": self.key, "version": self.version, "weight": self.weight, "threshold": self.threshold,
                "aggregates": self.aggregates_json(), "counts": dict(self.counts), "decisions": dict(self.decisions),
                "total": self.total,
                "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens,
                           "cached": self.cached_tokens},
                "cost": self.cost}

    def interval_text(self, style: str = "brackets") -> str:
        """The interval as the terminal (``[lo, hi]``) or markdown (``lo to hi``) prints it; "" without one."""
        if self.mean_ci is None:
            return ""
        low, high = self.mean_ci
        return f"[{low:.4f}, {high:.4f}]" if style == "brackets" else f"{low:.4f} to {high:.4f}"

    def pass_rate_text(self, style: str = "brackets") -> str:
        """The pass rate with its 95% interval (``rate_text``); "" without a graded result."""
        return rate_text(self.pass_rate, self.pass_rate_ci, style)


def rate_text(rate: float | None, ci: tuple[float, float] | None, style: str = "brackets") -> str:
    """A pass rate and its interval as the terminal (``40.0% [27.5%, 53.9%]``) or markdown
    (``40.0% (27.5% to 53.9%)``) prints it; "" without a rate (NA is not 0%)."""
    if rate is None:
        return ""
    interval = rate_interval_text(ci, style)
    if not interval:
        return f"{rate:.1%}"
    return f"{rate:.1%} {interval}" if style == "brackets" else f"{rate:.1%} ({interval})"


def rate_interval_text(ci: tuple[float, float] | None, style: str = "brackets") -> str:
    """A pass rate's interval alone: ``[27.5%, 53.9%]`` or ``27.5% to 53.9%``; "" without one."""
    if ci is None:
        return ""
    low, high = ci
    return f"[{low:.1%}, {high:.1%}]" if style == "brackets" else f"{low:.1%} to {high:.1%}"


def mean_interval(tally: Tally, bounds: tuple[float, float] | None = None) -> intervals.Interval | None:
    """The tally's mean's 95% interval within ``bounds`` (the grader's score range; None: unbounded;
    None too when the scores' sum or sum of squares is beyond a double: no finite spread)."""
    return intervals.mean_interval(tally.n, tally.sum_of_scores(), tally.sum_of_squares(), bounds,
                                   observed=(tally.score_min, tally.score_max))


def score_mean(tally: Tally) -> float | None:
    """The scored scores' mean (None without one), also of huge scores whose sum a double cannot
    hold (two scores of 1e308: 1e308): each part of the sum (store/ledger ``Split``) over n, then
    put together, within the smallest and largest score."""
    low = mean(tally.score_sum, tally.n)
    if low is None or not tally.score_sum_high:
        return low
    whole = SPLITS["sum"].whole(low, mean(tally.score_sum_high, tally.n) or 0.0)
    smallest, largest = tally.score_min, tally.score_max
    if smallest is not None and largest is not None:
        whole = min(largest, max(smallest, whole))
    return whole if math.isfinite(whole) else None


@dataclass(frozen=True)
class Rates:
    """The figures a grader's summary and a run's figures both state of a tally: the scores' mean,
    the pass rate with its 95% Wilson interval, the time per sample. Worked out once, here, for
    both (a run's figures need no mean interval: its sections' summaries state that)."""

    mean: float | None
    pass_rate: float | None
    pass_rate_ci: tuple[float, float] | None
    mean_duration_ms: float | None


def rates(tally: Tally) -> Rates:
    """The tally's ``Rates``: NA and errors are out of the pass rate (their counts are kept)."""
    passes = tally.decisions.get("pass", 0)
    graded = passes + tally.decisions.get("fail", 0)
    return Rates(mean=score_mean(tally), pass_rate=mean(passes, graded), pass_rate_ci=intervals.wilson(passes, graded),
                 mean_duration_ms=mean(tally.duration_ms, tally.total))


def summarize(key: str, version: int, threshold: float, tally: Tally, *, weight: float = 1.0,
              cost: str | None = None, bounds: tuple[float, float] | None = None) -> GraderSummary:
    """The grader's summary from its tally (and its cost in exact USD, from engine/usage.py);
    ``bounds``: the range its scores can take (store/suites.py ``score_range``), which the
    interval stays in."""
    figures = rates(tally)
    interval = mean_interval(tally, bounds)
    statuses = tally.statuses
    return GraderSummary(
        key=key, version=version, threshold=threshold, weight=weight, total=tally.total, n=tally.n,
        mean=figures.mean, pass_rate=figures.pass_rate, mean_duration_ms=figures.mean_duration_ms,
        pass_rate_ci=figures.pass_rate_ci,
        mean_ci=None if interval is None else interval.pair(),
        interval_method=INTERVAL_METHOD if interval is None else interval.method,
        score_min=tally.score_min, score_max=tally.score_max,
        counts={"ok": statuses.get("ok", 0), "error": statuses.get("error", 0),
                "invalid": statuses.get("invalid", 0), "na": statuses.get("skipped", 0)},
        decisions=dict(tally.decisions), prompt_tokens=tally.prompt_tokens,
        completion_tokens=tally.completion_tokens, cached_tokens=tally.cached_tokens, cached=tally.cached,
        cost=cost)


def mean(total: float, n: int) -> float | None:
    """``total`` over ``n`` things, None for none (undefined is not 0): a mean, a pass rate (passes
    over pass + fail), a time per sample. The one division of the studio's figures: every surface
    reads them from here (tests/test_one_rule.py finds no other). A total that is not a finite
    number (a sum past the largest double) has no mean either: None, never inf or NaN shown."""
    return total / n if n and math.isfinite(total) else None


class RunAggregates:
    """A run's figures, typed: what its ``results`` rows add up to (count, mean with its interval,
    pass rate, range, time per sample, tokens, statuses, each ``scores`` key's mean), what its
    writer added (batch metrics, where it ran, its budget, why it stopped) and its panels (a
    pairwise judge's shares, a jury's agreement). Every surface (``run``, ``runs show``, ``run
    --json``, the window's band and lists, the verdict, the jury's card) reads these attributes;
    the JSON stored in ``runs.aggregates`` and printed under ``--json``'s "aggregates" is made
    from it in one place (``as_json``), its keys in the order they came (a surface's output stays
    byte for byte what it was). ``read`` is the one reader of that JSON (tests/test_one_rule.py
    finds no surface reading it by key)."""

    __slots__ = ("_values",)

    #: each figure's JSON key (the attribute of the same name, but ``score_min``/``score_max``)
    FIELDS: ClassVar[dict[str, str]] = {
        "count": "count", "mean": "mean", "mean_ci": "mean_ci", "interval": "interval", "pass_rate": "pass_rate",
        "pass_rate_ci": "pass_rate_ci", "pass_threshold": "pass_threshold", "n": "n", "score_min": "min", "score_max": "max",
        "mean_duration_ms": "mean_duration_ms", "prompt_tokens": "prompt_tokens",
        "completion_tokens": "completion_tokens", "cached_tokens": "cached_tokens", "cached": "cached",
        "statuses": "statuses", "metrics": "metrics", "batch_metrics": "batch_metrics", "pairwise": "pairwise",
        "pairwise_ci": "pairwise_ci", "jury": "jury", "executor": "executor", "budget": "budget",
        "stopped": "stopped"}

    def __init__(self, values: Mapping[str, JsonValue] | None = None) -> None:
        self._values: JsonObject = dict(values or {})

    @classmethod
    def read(cls, stored: Mapping[str, JsonValue] | None) -> RunAggregates:
        """The figures of a stored ``aggregates`` object (``RunInfo.aggregates``, or one JSON)."""
        return cls(stored)

    def as_json(self) -> JsonObject:
        """The ``aggregates`` object: stored in ``runs.aggregates``, printed by ``run --json``."""
        return dict(self._values)

    def updated(self, other: RunAggregates | None = None, **figures: JsonValue) -> RunAggregates:
        """These figures with ``other``'s and then ``figures`` (attribute names) over them; a figure
        new here comes after the ones already present (as a dict's update)."""
        values = dict(self._values)
        if other is not None:
            values.update(other._values)
        for name, value in figures.items():
            values[self.FIELDS[name]] = value
        return RunAggregates(values)

    def without(self, *keys: str) -> RunAggregates:
        """These figures without the JSON ``keys`` (a suite's stored "graders": its sections say it)."""
        return RunAggregates({k: v for k, v in self._values.items() if k not in keys})

    def panels_json(self) -> JsonObject:
        """A pairwise judge's or a jury's figures as stored (``run --json`` prints them at its top)."""
        return {key: self._values[key] for key in ("pairwise", "pairwise_ci", "jury") if key in self._values}

    def has(self, name: str) -> bool:
        """Whether the figure (an attribute name) was stored at all (a stored one may be None)."""
        return self.FIELDS[name] in self._values

    def _get(self, name: str, default: JsonValue = None) -> JsonValue:
        value = self._values.get(self.FIELDS[name])
        return default if value is None else value

    def _float(self, name: str) -> float | None:
        value = self._get(name)
        return None if value is None else float(value)

    def _int(self, name: str) -> int | None:
        value = self._get(name)
        return None if value is None else int(value)

    def _text(self, name: str) -> str | None:
        value = self._get(name)
        return None if value is None else str(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunAggregates) and self._values == other._values

    __hash__ = None  # type: ignore[assignment]  # (its JSON objects are not hashable)

    def __repr__(self) -> str:
        return f"RunAggregates({self._values!r})"

    @property
    def count(self) -> int | None:
        """Results stored (every status); None when not counted."""
        return self._int("count")

    @property
    def mean(self) -> float | None:
        return self._float("mean")

    @property
    def mean_ci(self) -> tuple[float, float] | None:
        """The mean's 95% interval (None without one)."""
        return _pair(self._get("mean_ci"))

    @property
    def pass_rate_ci(self) -> tuple[float, float] | None:
        """The pass rate's 95% Wilson interval (None without one, and for a run stored before it was)."""
        return _pair(self._get("pass_rate_ci"))

    def pass_rate_text(self, style: str = "brackets") -> str:
        """The pass rate with its interval (``rate_text``); "" without a rate."""
        return rate_text(self.pass_rate, self.pass_rate_ci, style)

    @property
    def interval(self) -> str | None:
        """How the interval was worked out (core/intervals.py's method name)."""
        return self._text("interval")

    @property
    def pass_rate(self) -> float | None:
        return self._float("pass_rate")

    @property
    def pass_threshold(self) -> float:
        return float(self._get("pass_threshold", DEFAULT_PASS_THRESHOLD))

    @property
    def n(self) -> int | None:
        """Scored results: the mean's n."""
        return self._int("n")

    @property
    def score_min(self) -> float | None:
        return self._float("score_min")

    @property
    def score_max(self) -> float | None:
        return self._float("score_max")

    @property
    def mean_duration_ms(self) -> float | None:
        return self._float("mean_duration_ms")

    @property
    def prompt_tokens(self) -> int:
        return int(self._get("prompt_tokens", 0))

    @property
    def completion_tokens(self) -> int:
        return int(self._get("completion_tokens", 0))

    @property
    def cached_tokens(self) -> int:
        return int(self._get("cached_tokens", 0))

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cached(self) -> int:
        """Results read from the judge cache."""
        return int(self._get("cached", 0))

    @property
    def statuses(self) -> dict[str, int]:
        """Results by status ({} when not counted)."""
        return dict(self._get("statuses", {}))

    @property
    def metrics(self) -> dict[str, float | None]:
        """Each ``scores`` key's mean (a suite's: each grader's mean)."""
        return dict(self._get("metrics", {}))

    @property
    def batch_metrics(self) -> JsonObject:
        """A batch grader's metrics over the whole run."""
        return dict(self._get("batch_metrics", {}))

    @property
    def pairwise(self) -> dict[str, float | None]:
        """A pairwise judge's shares (win_a, ..., position consistency); {} for other runs."""
        return dict(self._get("pairwise", {}))

    @property
    def pairwise_ci(self) -> dict[str, list[float] | None]:
        return dict(self._get("pairwise_ci", {}))

    @property
    def jury(self) -> JsonObject:
        """A jury's agreement (store/panel_stats.py ``jury_summary``); {} for other runs."""
        return dict(self._get("jury", {}))

    @property
    def executor(self) -> JsonObject:
        """Where a run not graded on this machine ran (engine/executors ``report``); {} otherwise."""
        return dict(self._get("executor", {}))

    @property
    def budget(self) -> JsonObject:
        return dict(self._get("budget", {}))

    @property
    def stopped(self) -> str | None:
        """Why the run stopped before its end (None: it did not)."""
        return self._text("stopped") or None


def _pair(stored: JsonValue) -> tuple[float, float] | None:
    """A stored [low, high] interval (None: none, or either end missing)."""
    if not stored or stored[0] is None or stored[1] is None:
        return None
    return float(stored[0]), float(stored[1])


def run_summary(library: Library, run_id: int, threshold: float = DEFAULT_PASS_THRESHOLD, *,
                tally: Tally | None = None, metric_sums: dict[str, tuple[float, int]] | None = None,
                panels: JsonObject | None = None) -> RunAggregates:
    """A run's figures: what its ``results`` rows add up to (store/runs ``facts``, the given
    ``tally``, ``metric_sums`` and ``panels`` when its writer kept them), as ``run_figures`` states them."""
    return run_figures(library.runs.facts(run_id, threshold, tally=tally, metric_sums=metric_sums, panels=panels),
                       threshold)


def run_figures(facts: RowFacts, threshold: float) -> RunAggregates:
    """The figures of what a run's ``results`` rows add up to (``facts``, as the store answered them)
    with the rates a summary states of them (``rates``): mean, pass rate, time per sample, and each
    ``scores`` key's mean."""
    counted = facts.tally
    shared = rates(counted)
    return RunAggregates({
        "count": counted.total, "mean": shared.mean, "pass_rate": shared.pass_rate,
        "pass_rate_ci": None if shared.pass_rate_ci is None else list(shared.pass_rate_ci), "pass_threshold": threshold,
        "min": counted.score_min, "max": counted.score_max, "mean_duration_ms": shared.mean_duration_ms,
        "prompt_tokens": counted.prompt_tokens, "completion_tokens": counted.completion_tokens,
        "cached_tokens": counted.cached_tokens, "cached": counted.cached, "statuses": facts.statuses,
        "metrics": {key: mean(total, n) for key, (total, n) in facts.metric_sums.items()},
        **facts.panels,
    })


def run_aggregates(library: Library, run_id: int, threshold: float = DEFAULT_PASS_THRESHOLD, *,
                   tally: Tally | None = None, metric_sums: dict[str, tuple[float, int]] | None = None,
                   panels: JsonObject | None = None) -> JsonObject:
    """``run_summary`` as the JSON ``runs.aggregates`` stores (``RunAggregates.as_json``)."""
    return run_summary(library, run_id, threshold, tally=tally, metric_sums=metric_sums, panels=panels).as_json()


def stored_summary(info: RunInfo) -> RunAggregates:
    """The figures the run stored (``RunInfo.aggregates``), typed."""
    return RunAggregates.read(info.aggregates)


def band_summary(library: Library, info: RunInfo, live: bool) -> RunAggregates:
    """The figures the window's band shows: a finished run's as stored, a live run's (or one that
    stored none) counted now, with the batch metrics its end stored."""
    stored = stored_summary(info)
    if not live and stored.has("count"):
        return stored
    figures = run_summary(library, info.id, info.pass_threshold)
    return figures.updated(batch_metrics=stored.batch_metrics) if stored.has("batch_metrics") else figures
