"""What ``run`` reports at the end, shared by ``run``, ``run --repeat`` and ``runs list|show``: the
summary (``run --json``), per grader for a suite run. The verdict that sets the exit code is the
engine's (engine/verdict.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studio.core.models import RunInfo

if TYPE_CHECKING:
    from studio.core.store.library import Library


def summary(info: RunInfo, library: Library | None = None) -> dict[str, Any]:
    """``run --json``; for a suite run (given the library) also ``suite``, ``graders`` (per grader:
    key, version, aggregates with the mean's interval, pass rate and n, counts) and ``overall``."""
    out = {
        "id": info.id,
        "status": info.status,
        "grader": info.grader_key,
        "grader_version": info.grader_version,
        "dataset": info.dataset,
        "endpoint": info.endpoint,
        "total": info.total,
        "done": info.done,
        "counts": info.counts,
        "aggregates": info.aggregates,
        "created_at": info.created_at.isoformat(),
        "finished_at": info.finished_at.isoformat() if info.finished_at else None,
        # pairwise judges and juries: their own numbers, computed from the stored results
        **{key: info.aggregates[key] for key in ("pairwise", "pairwise_ci", "jury") if key in info.aggregates},
    }
    if info.suite is not None:  # the run has several graders: they are under "graders"
        out["grader"] = out["grader_version"] = None
        if library is not None:
            out.update(suite_fields(info, library))
    return out


def suite_fields(info: RunInfo, library: Library) -> dict[str, Any]:
    from studio.core.store.run_graders import grader_aggregates, overall_aggregates

    assert info.suite is not None
    graders = [{"key": g.key, "version": g.version, "weight": g.weight, "threshold": g.threshold,
                "aggregates": g.aggregates, "counts": g.counts} for g in grader_aggregates(library, info.id)]
    out: dict[str, Any] = {"suite": info.suite.get("key"), "suite_version": info.suite.get("version"),
                           "graders": graders}
    rule = info.suite.get("overall") or "none"
    if rule != "none":
        overall = overall_aggregates(library, info.id)
        out["overall"] = {"rule": rule, "grader": info.suite.get("overall_grader"), **overall}
    return out
