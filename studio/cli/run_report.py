"""What ``run`` reports at the end, shared by ``run``, ``run --repeat`` and ``runs list|show``: the
summary (``run --json``), per grader for a suite run. Every figure (mean, interval, pass rate, n,
counts, tokens, cost) is the run's one summary (engine/summary.py, through ``load_run``); the verdict
that sets the exit code is the engine's (engine/verdict.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject
from studio.core.models import RunInfo
from studio.core.outside import iso_time

if TYPE_CHECKING:
    from studio.core.engine.sections import RunSections
    from studio.core.engine.summary import RunAggregates
    from studio.core.store.library import Library


def summary(info: RunInfo, library: Library | None = None, run: RunSections | None = None) -> JsonObject:
    """``run --json``. Given the library (or the run's sections), "aggregates" holds the run's
    summary (its one grader's, or a suite's overall score) and, for a suite run, ``suite``,
    ``graders`` (per grader: key, version, aggregates with the mean's interval, pass rate and n,
    counts, decisions, tokens, cost) and ``overall``. Without either: the aggregates as stored."""
    if run is None and library is not None:
        from studio.core.engine.sections import load_run

        run = load_run(library, info.id)
    from studio.core.engine.summary import stored_summary

    stored = stored_summary(info)
    aggregates = (figures(run) if run is not None else stored).as_json()
    out: JsonObject = {
        "id": info.id,
        "status": info.status,
        "grader": info.grader_key,
        "grader_version": info.grader_version,
        "dataset": info.dataset,
        "endpoint": info.endpoint,
        "total": info.total,
        "done": info.done,
        "counts": info.counts,
        "aggregates": aggregates,
        "created_at": iso_time(info.created_at),
        "finished_at": iso_time(info.finished_at),
        # pairwise judges and juries: their own numbers, computed from the stored results
        **stored.panels_json(),
    }
    if info.suite is not None:  # the run has several graders: they are under "graders"
        out["grader"] = out["grader_version"] = None
        if run is not None:
            out.update(suite_fields(run))
    return out


def figures(run: RunSections) -> RunAggregates:
    """The run's figures with the summary's (``RunSections.figures``)."""
    return run.figures()


def suite_fields(run: RunSections) -> JsonObject:
    suite = run.info.suite or {}
    out: JsonObject = {"suite": suite.get("key"), "suite_version": suite.get("version"),
                           "graders": [s.to_json() for s in run.summaries]}
    if run.overall is not None:
        out["overall"] = {"rule": run.rule, "grader": suite.get("overall_grader"), **run.overall.to_json()}
    return out
