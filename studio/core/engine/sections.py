"""A run as the reports, verdicts and usage totals see it: one section per grader.

Why a module of its own: JUnit, markdown, GitHub annotations, thresholds and token totals all walk a
run grader by grader (a suite runs several). ``load_run`` is the one place that knows how a run is
split: today a run has one grader, so it returns one section; a suite's loader returns one per
grader, each narrowing the results with its own SQL condition (``where`` / ``params``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from studio.core.models import RunInfo
from studio.core.store import Library

DEFAULT_PASS_THRESHOLD = 0.5


@dataclass(frozen=True)
class Section:
    """One grader of a run: its identity, pass threshold, counts and aggregates."""

    key: str
    version: int
    pass_threshold: float
    counts: dict[str, int]
    aggregates: dict[str, Any]
    #: the grader's own endpoint (a run's --endpoint wins), for usage rows that do not name one
    endpoint: str | None = None
    #: an SQL condition on the ``results`` table narrowing the run's rows to this grader ("" = all)
    where: str = ""
    params: dict[str, Any] = field(default_factory=dict)

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

    @property
    def overall_mean(self) -> float | None:
        """The run's score: its one grader's mean, or a suite's mean of its graders' means."""
        means = [s.mean for s in self.sections if s.mean is not None]
        if len(self.sections) == 1:
            return self.sections[0].mean
        return sum(means) / len(means) if means else None


def load_run(library: Library, run_id: int) -> RunSections:
    """The run and its sections (NotFound for an unknown run)."""
    info = library.runs.get(run_id)
    threshold = float(info.settings.get("pass_threshold", info.aggregates.get("pass_threshold",
                                                                               DEFAULT_PASS_THRESHOLD)))
    aggregates = info.aggregates if "mean" in info.aggregates else library.runs.aggregates(run_id, threshold)
    endpoint = info.endpoint or _grader_endpoint(library, info)
    section = Section(key=info.grader_key, version=info.grader_version, pass_threshold=threshold,
                      counts=dict(info.counts), aggregates=aggregates, endpoint=endpoint)
    return RunSections(info=info, sections=[section])


def _grader_endpoint(library: Library, info: RunInfo) -> str | None:
    try:
        definition = library.graders.version(info.grader_key, info.grader_version).definition
    except Exception:  # a purged grader: its rows still name their endpoint
        return None
    return getattr(definition, "endpoint", None)


RESULT_FIELDS = ("sample_idx", "sample_id", "status", "score", "rationale", "error", "duration_ms",
                 "prompt_tokens", "completion_tokens", "cached_tokens", "details")


def section_rows(library: Library, run_id: int, section: Section, *, order: str = "sample_idx",
                 limit: int | None = None, extra: str = "") -> Iterator[dict[str, Any]]:
    """The section's results as dicts of ``RESULT_FIELDS`` (``details`` left as stored JSON text)."""
    sql = (f"SELECT {', '.join(RESULT_FIELDS)} FROM results WHERE run_id = :run_id"
           f"{' AND ' + section.where if section.where else ''}{extra} ORDER BY {order}"
           f"{'' if limit is None else ' LIMIT :limit'}")
    params = {"run_id": run_id, **section.params, **({} if limit is None else {"limit": limit})}
    with library.engine.connect() as conn:
        for row in conn.execute(text(sql), params):
            yield dict(row._mapping)


def first_line(value: str | None, width: int = 200) -> str:
    """The first non-empty line of a rationale or error, cut to ``width`` characters."""
    for line in (value or "").splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""
