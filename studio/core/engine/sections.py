"""A run as the reports, verdicts and usage totals see it: one section per grader.

Why a module of its own: JUnit, markdown, GitHub annotations, thresholds and token totals all walk a
run grader by grader. ``load_run`` is the one place that knows how a run is split: a run of one
grader is one section over its ``results`` rows; a suite run is one section per grader (its slot),
each reading that grader's own results (``store/run_graders.rows_sql``: the plain scores kept in the
sample rows' ``scores`` and the ``grader_results`` rows put back together), never the overall rows.
A suite with an overall rule also carries the overall score's aggregates (``RunSections.overall``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypedDict, cast

from studio.core.json_types import JsonValue
from studio.core.models import RunInfo
from studio.core.models.pass_rule import decide, verdict_in
from studio.core.models.spend import Usage, priced, usd
from studio.core.store import Library
from studio.core.store.run_graders import RunTallies, grader_source, run_tallies
from studio.core.store.run_spend import SpendOf, run_spend

from .summary import GraderSummary, RunAggregates, stored_summary, summarize


@dataclass(frozen=True)
class Section:
    """One grader of a run: its identity, pass threshold and its one summary (engine/summary.py)."""

    key: str
    version: int
    pass_threshold: float
    summary: GraderSummary
    #: the grader's own endpoint (a run's --endpoint wins), for usage rows that do not name one
    endpoint: str | None = None
    #: a suite run's section reads its grader's rows by slot (False: the run's ``results`` rows)
    suite: bool = False
    slot: int = 0
    dataset_id: int = 0

    @property
    def counts(self) -> dict[str, int]:
        """By result status: ok, error, invalid, skipped (= NA)."""
        counts = self.summary.counts
        return {"ok": counts["ok"], "error": counts["error"], "invalid": counts["invalid"], "skipped": counts["na"]}

    @property
    def mean(self) -> float | None:
        return self.summary.mean

    @property
    def pass_rate(self) -> float | None:
        return self.summary.pass_rate

    @property
    def label(self) -> str:
        return f"{self.key} v{self.version}"


@dataclass(frozen=True)
class RunSections:
    info: RunInfo
    sections: list[Section]
    #: the run's tokens and cost per grader and endpoint (models/spend.py ``Usage``), read once
    usage: Usage
    #: a suite run's overall score (its summary, keyed "overall"), None without an overall rule
    overall: GraderSummary | None = field(default=None)

    @property
    def suite(self) -> bool:
        return self.info.suite is not None

    @property
    def rule(self) -> str | None:
        """A suite's overall rule (mean, all-pass, composite), None for no rule or one grader."""
        return self.info.overall_rule

    @property
    def has_overall_score(self) -> bool:
        """A run of one grader (its mean) or a suite with an overall rule."""
        return self.info.has_overall_score

    @property
    def headline(self) -> GraderSummary | None:
        """The summary of the run's one score: its one grader's, or a suite's overall (None for a
        suite without an overall rule: it has no one score)."""
        if self.suite:
            return self.overall
        return self.sections[0].summary if self.sections else None

    @property
    def overall_mean(self) -> float | None:
        """The run's score: its one grader's mean, or a suite's overall score by its rule."""
        headline = self.headline
        return None if headline is None else headline.mean

    @property
    def stopped(self) -> str | None:
        """Why the run stopped before its end, as its figures stored it (None: it did not)."""
        return stored_summary(self.info).stopped

    @property
    def summaries(self) -> list[GraderSummary]:
        return [s.summary for s in self.sections]

    def spend_of(self) -> list[SpendOf]:
        """What the store needs to count each section's spend (store/run_spend.py)."""
        return [SpendOf(key=s.key, slot=s.slot, suite=s.suite, dataset_id=s.dataset_id, tokens=s.summary.tokens,
                        endpoint=s.endpoint) for s in self.sections]

    def figures(self) -> RunAggregates:
        """The run's stored figures with every figure a summary states taken from the summary:
        the headline's (one grader, or a suite's overall score; a suite without an overall rule has
        none) and, for a suite, each grader's mean as its "metric" (never a mean over the overall
        rows, which leave out every sample another grader errored on). What ``run --json`` prints
        under "aggregates", and the window's band reads."""
        figures = stored_summary(self.info).without("graders")
        headline = self.headline
        if headline is not None:
            figures = figures.updated(RunAggregates.read(headline.aggregates_json()))
            figures = figures.updated(
                prompt_tokens=headline.prompt_tokens, completion_tokens=headline.completion_tokens,
                cached_tokens=headline.cached_tokens, cached=headline.cached,
                mean_duration_ms=headline.mean_duration_ms, count=headline.total)
        elif self.suite:
            figures = figures.updated(mean=None, mean_ci=None, pass_rate=None, pass_rate_ci=None, n=None,
                                      score_min=None, score_max=None)
        if self.suite:
            figures = figures.updated(metrics={s.key: s.mean for s in self.summaries if s.mean is not None},
                                      pass_threshold=self.info.pass_threshold)
        return figures


def load_run(library: Library, run_id: int, *, info: RunInfo | None = None) -> RunSections:
    """The run and its sections, each with its summary and its cost (NotFound for an unknown run).
    ``info``: the run as the caller just read it (``runs.get`` counts the run's results by status:
    a pass over a million-result run's status index not worth making twice). The store answers
    twice, once each: the run's graders with their tallies (``run_tallies``), then, with their
    tokens, their spend (``run_spend``), which is priced (models/spend.py) before any summary is made."""
    answer, usage = tallied(library, run_id, info)
    info = answer.info
    suite = info.suite is not None
    sections = [
        Section(key=g.key, version=g.version, pass_threshold=g.threshold,
                summary=summarize(g.key, g.version, g.threshold, t, weight=g.weight, bounds=g.score_range,
                                  cost=usd(usage.grader_cost.get(g.key))),
                endpoint=info.endpoint or g.endpoint, suite=suite, slot=g.slot, dataset_id=answer.dataset_id)
        for g, t in zip(answer.graders, answer.tallies, strict=True)]
    overall = None
    if answer.overall is not None:
        overall = summarize("overall", info.grader_version, info.pass_threshold, answer.overall,
                            bounds=answer.overall_bounds, cost=usd(usage.cost))
    return RunSections(info=info, sections=sections, usage=usage, overall=overall)


def tallied(library: Library, run_id: int, info: RunInfo | None = None) -> tuple[RunTallies, Usage]:
    """The store's two answers of a run (its graders with their tallies, then their spend), the
    spend priced (models/spend.py): what ``load_run`` makes the sections' summaries from, and all a
    budget needs of a run (``budget.run_budget``: no summary made)."""
    answer = run_tallies(library, run_id, info)
    info = answer.info
    spend = run_spend(library, run_id, [
        SpendOf(key=g.key, slot=g.slot, suite=info.suite is not None, dataset_id=answer.dataset_id,
                tokens=t.prompt_tokens + t.completion_tokens, endpoint=info.endpoint or g.endpoint)
        for g, t in zip(answer.graders, answer.tallies, strict=True)])
    return answer, priced(spend.graders, spend.configs)


def section_source(run_id: int, section: Section) -> tuple[str, tuple[object, ...]]:
    """The section's rows as an SQL subquery with its numbered parameters (``?1``...): the run's
    ``results`` rows for a run of one grader, the grader's own rows for a suite run."""
    return grader_source(run_id, section.suite, section.slot, section.key, section.dataset_id)


RESULT_FIELDS = ("sample_idx", "sample_id", "status", "score", "rationale", "error", "duration_ms",
                 "prompt_tokens", "completion_tokens", "cached_tokens", "details")


class ResultRow(TypedDict):
    """A ``section_rows`` row: ``RESULT_FIELDS`` as the results tables' columns type them."""

    sample_idx: int
    sample_id: str
    status: str
    score: float | None
    rationale: str | None
    error: str | None
    duration_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    #: the stored JSON text (decoded by ``verdict_of`` where it is needed)
    details: str | None


def section_rows(library: Library, run_id: int, section: Section, *, order: str = "sample_idx",
                 limit: int | None = None, extra: str = "") -> Iterator[ResultRow]:
    """The section's results as dicts of ``RESULT_FIELDS`` (``details`` left as stored JSON text);
    ``extra`` is a literal condition (`` AND status = 'error'``) on those fields."""
    source, params = section_source(run_id, section)
    sql = (f"SELECT {', '.join(RESULT_FIELDS)} FROM ({source}) AS src WHERE 1 = 1{extra} ORDER BY {order}"
           f"{'' if limit is None else f' LIMIT ?{len(params) + 1}'}")
    with library.engine.connect() as conn:
        for row in conn.exec_driver_sql(sql, params if limit is None else (*params, limit)):
            # the SELECT names exactly RESULT_FIELDS, each typed by its column in results/grader_results
            yield cast(ResultRow, dict(row._mapping))


def decision_of(row: ResultRow, threshold: float) -> str:
    """A ``section_rows`` row's decision by the pass rule (its details are still JSON text)."""
    return decide(row["status"], row["score"], verdict_of(row), threshold)


def verdict_of(row: ResultRow) -> JsonValue:
    """The judge's own verdict in a ``section_rows`` row (its details still JSON text), or None."""
    details = row.get("details")
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            details = None
    return verdict_in(details)


def first_line(value: str | None, width: int = 200) -> str:
    """The first non-empty line of a rationale or error, cut to ``width`` characters."""
    for line in (value or "").splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""
