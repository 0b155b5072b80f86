"""What ``run`` reports at the end, shared by ``run``, ``run --repeat`` and ``runs list|show``: the
summary (``run --json``), per grader for a suite run, and the verdict that sets the exit code."""

from __future__ import annotations

import sys
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


def _verdict(info: RunInfo, fail_under: float | None) -> dict[str, Any]:
    """Why ``run`` exits as it does: the mean, the threshold, and each reason for a failure."""
    reasons: list[str] = []
    if info.status != "completed":
        reasons.append(f"the run ended {info.status}")
    errored = info.counts.get("error", 0) + info.counts.get("invalid", 0)
    if errored:
        reasons.append(f"{errored} sample(s) errored or were invalid")
    mean = info.aggregates.get("mean")
    if fail_under is not None:
        if mean is None:
            reasons.append(f"no mean score to compare with --fail-under {fail_under:g}")
        elif mean < fail_under:
            reasons.append(f"mean {mean:.4f} is below --fail-under {fail_under:g}")
    return {"passed": not reasons, "mean": mean, "fail_under": fail_under, "reasons": reasons}


def _print_verdict(verdict: dict[str, Any]) -> None:
    """One line on stderr, so a CI log says why the step failed (or what it checked)."""
    if verdict["passed"] and verdict["fail_under"] is None:
        return
    mean = "none" if verdict["mean"] is None else f"{verdict['mean']:.4f}"
    threshold = "" if verdict["fail_under"] is None else f", threshold {verdict['fail_under']:g}"
    outcome = "PASS" if verdict["passed"] else "FAIL: " + "; ".join(verdict["reasons"])
    print(f"verdict: mean {mean}{threshold}: {outcome}", file=sys.stderr)
