"""A run as the reports, verdicts and usage totals see it: one section per grader.

Why a module of its own: JUnit, markdown, GitHub annotations, thresholds and token totals all walk a
run grader by grader. ``load_run`` is the one place that knows how a run is split: a run of one
grader is one section over its ``results`` rows; a suite run is one section per grader (its slot),
each reading that grader's own results (``store/run_graders.rows_sql``: the plain scores kept in the
sample rows' ``scores`` and the ``grader_results`` rows put back together), never the overall rows.
A suite with an overall rule also carries the overall score's aggregates (``RunSections.overall``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from studio.core.models import RunInfo
from studio.core.store import Library
from studio.core.store.run_graders import grader_aggregates, key_path, overall_aggregates, rows_sql


@dataclass(frozen=True)
class Section:
    """One grader of a run: its identity, pass threshold, counts and aggregates."""

    key: str
    version: int
    pass_threshold: float
    #: by result status (ok, error, invalid, skipped = NA), of this grader's results
    counts: dict[str, int]
    aggregates: dict[str, Any]
    #: the grader's own endpoint (a run's --endpoint wins), for usage rows that do not name one
    endpoint: str | None = None
    #: a suite run's section reads its grader's rows by slot (False: the run's ``results`` rows)
    suite: bool = False
    slot: int = 0
    dataset_id: int = 0

    @property
    def mean(self) -> float | None:
        return self.aggregates.get("mean")

    @property
    def pass_rate(self) -> float | None:
        return self.aggregates.get("pass_rate")

    @property
    def label(self) -> str:
        return f"{self.key} v{self.version}"


@dataclass(frozen=True)
class RunSections:
    info: RunInfo
    sections: list[Section]
    #: a suite run's overall score (``aggregates`` and ``counts``), None without an overall rule
    overall: dict[str, Any] | None = field(default=None)

    @property
    def suite(self) -> bool:
        return self.info.suite is not None

    @property
    def rule(self) -> str | None:
        """A suite's overall rule (mean, all-pass, composite), None for no rule or one grader."""
        if not self.suite:
            return None
        rule = str((self.info.suite or {}).get("overall") or "none")
        return None if rule == "none" else rule

    @property
    def has_overall_score(self) -> bool:
        """A run of one grader (its mean) or a suite with an overall rule."""
        return not self.suite or self.overall is not None

    @property
    def overall_mean(self) -> float | None:
        """The run's score: its one grader's mean, or a suite's overall score by its rule (None
        for a suite without an overall rule: it has no one score)."""
        if self.suite:
            return None if self.overall is None else self.overall["aggregates"].get("mean")
        return self.sections[0].mean if self.sections else None


def load_run(library: Library, run_id: int) -> RunSections:
    """The run and its sections (NotFound for an unknown run)."""
    info = library.runs.get(run_id)
    if info.suite is not None:
        return _load_suite(library, info)
    threshold = info.pass_threshold
    aggregates = info.aggregates if "mean" in info.aggregates else library.runs.aggregates(run_id, threshold)
    endpoint = info.endpoint or _grader_endpoint(library, info.grader_key, info.grader_version)
    section = Section(key=info.grader_key, version=info.grader_version, pass_threshold=threshold,
                      counts=dict(info.counts), aggregates=aggregates, endpoint=endpoint)
    return RunSections(info=info, sections=[section])


def _load_suite(library: Library, info: RunInfo) -> RunSections:
    dataset_id = library.runs.raw(info.id).dataset_id
    sections = [
        Section(key=g.key, version=g.version, pass_threshold=g.threshold,
                counts={"ok": g.counts["ok"], "error": g.counts["error"], "invalid": g.counts["invalid"],
                        "skipped": g.counts["na"]},
                aggregates=g.aggregates, endpoint=info.endpoint or _grader_endpoint(library, g.key, g.version),
                suite=True, slot=g.slot, dataset_id=dataset_id)
        for g in grader_aggregates(library, info.id)
    ]
    overall = None
    if str((info.suite or {}).get("overall") or "none") != "none":
        overall = overall_aggregates(library, info.id)
    return RunSections(info=info, sections=sections, overall=overall)


def _grader_endpoint(library: Library, key: str, version: int) -> str | None:
    try:
        definition = library.graders.version(key, version).definition
    except Exception:  # a purged grader: its rows still name their endpoint
        return None
    return getattr(definition, "endpoint", None)


def section_source(run_id: int, section: Section) -> tuple[str, tuple[Any, ...]]:
    """The section's rows as an SQL subquery with its numbered parameters (``?1``...): the run's
    ``results`` rows for a run of one grader, the grader's own rows for a suite run."""
    if not section.suite:
        return rows_sql(False), (run_id,)
    return rows_sql(True), (section.slot, key_path(section.key), run_id, section.dataset_id)


RESULT_FIELDS = ("sample_idx", "sample_id", "status", "score", "rationale", "error", "duration_ms",
                 "prompt_tokens", "completion_tokens", "cached_tokens", "details")


def section_rows(library: Library, run_id: int, section: Section, *, order: str = "sample_idx",
                 limit: int | None = None, extra: str = "") -> Iterator[dict[str, Any]]:
    """The section's results as dicts of ``RESULT_FIELDS`` (``details`` left as stored JSON text);
    ``extra`` is a literal condition (`` AND status = 'error'``) on those fields."""
    source, params = section_source(run_id, section)
    sql = (f"SELECT {', '.join(RESULT_FIELDS)} FROM ({source}) AS src WHERE 1 = 1{extra} ORDER BY {order}"
           f"{'' if limit is None else f' LIMIT ?{len(params) + 1}'}")
    with library.engine.connect() as conn:
        for row in conn.exec_driver_sql(sql, params if limit is None else (*params, limit)):
            yield dict(row._mapping)


def first_line(value: str | None, width: int = 200) -> str:
    """The first non-empty line of a rationale or error, cut to ``width`` characters."""
    for line in (value or "").splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""
