"""``run --repeat N``: grade each sample N times (cache bypassed) and measure the judge's self-agreement.

The N runs are ordinary runs (stored, resumable, visible in the history) tagged with the first
run's id (``repeat_of``) and their place (``repeat_index``). The report gives each sample's spread
and the judge's agreement with itself: Fleiss' κ over its verdicts, Krippendorff's α (interval)
over its scores. A sample that errored in some repetition is left out of κ (counted); for α its
missing values are simply missing, as α allows.
"""

from __future__ import annotations

import threading

import numpy as np

from studio.core import stats
from studio.core.json_types import JsonObject
from studio.core.models import RunInfo
from studio.core.store import Library, NotFound

from .agreement import judge_calls
from .runner import ProgressCallback, RunOptions, execute_run, start_run


def repeat_run(library: Library, grader_key: str, dataset: str, options: RunOptions, repeats: int, *,
               on_progress: ProgressCallback | None = None,
               cancel: threading.Event | None = None) -> list[RunInfo]:
    """N runs of the same grader version on the same dataset, each bypassing the judge cache."""
    if repeats < 2:
        raise ValueError("--repeat needs at least 2 repetitions to measure self-agreement")
    cancel = cancel or threading.Event()
    infos: list[RunInfo] = []
    first: int | None = None
    for index in range(1, repeats + 1):
        if cancel.is_set():
            break
        run_options = options.model_copy(update={"use_cache": False, "repeat_of": first, "repeat_index": index})
        run = start_run(library, grader_key, dataset, run_options)
        first = first or run.id
        infos.append(execute_run(library, run.id, on_progress=on_progress, cancel=cancel))
    return infos


def repeat_group(library: Library, run_id: int) -> list[RunInfo]:
    """Every run of the repeat group ``run_id`` belongs to, in order (just that run when none)."""
    info = library.runs.get(run_id)
    first = info.settings.get("repeat_of") or run_id
    if info.settings.get("repeat_index") is None:
        return [info]
    group = [r for r in library.runs.list(grader_key=info.grader_key, limit=10_000)
             if r.id == first or r.settings.get("repeat_of") == first]
    return sorted(group, key=lambda r: r.settings.get("repeat_index") or 0)


def consistency(library: Library, run_ids: list[int]) -> JsonObject:
    """The repeat group's self-agreement report, headed for JSON (``run --repeat --json`` prints it as is)."""
    if len(run_ids) < 2:
        raise NotFound("self-agreement needs two or more runs of the same grader on the same dataset")
    calls = [judge_calls(library, r) for r in run_ids]
    order = {sid: c.idx for sid, c in calls[0].items()}
    all_ids = sorted(set().union(*calls), key=lambda s: order.get(s, 1 << 30))
    excluded: dict[str, int] = {}
    verdict_rows: list[list[str]] = []
    score_units: list[list[float | None]] = []
    samples: list[JsonObject] = []
    for sid in all_ids:
        seen = [c.get(sid) for c in calls]
        verdicts = [None if s is None else ("NA" if s.status == "skipped" else s.verdict) for s in seen]
        scores = [None if s is None or s.status != "ok" else s.score for s in seen]
        broken = [s is None or s.status in ("error", "invalid") for s in seen]
        if any(broken):
            excluded["error_or_missing_in_a_repeat"] = excluded.get("error_or_missing_in_a_repeat", 0) + 1
        else:
            verdict_rows.append([str(v) for v in verdicts])
        score_units.append(scores)
        present = np.array([x for x in scores if x is not None], dtype=float)
        spread = float(present.max() - present.min()) if len(present) else None
        std = float(present.std(ddof=1)) if len(present) >= 2 else None
        unstable = len({v for v in verdicts if v is not None}) > 1 or bool(spread)
        samples.append({"sample_id": sid, "idx": order.get(sid), "verdicts": verdicts, "scores": scores,
                        "spread": spread, "std": std, "unstable": unstable})
    samples.sort(key=lambda s: (-(s["spread"] or 0.0), not s["unstable"], s["idx"] or 0))
    fleiss = stats.fleiss_kappa(verdict_rows)
    alpha = stats.krippendorff_alpha_interval(score_units)
    return {
        "runs": run_ids, "repeats": len(run_ids), "n": len(all_ids),
        "fleiss_kappa": fleiss.value, "fleiss_reading": stats.landis_koch(fleiss.value),
        "krippendorff_alpha": alpha.value,
        "undefined": {k: v.reason for k, v in (("fleiss_kappa", fleiss), ("krippendorff_alpha", alpha))
                      if v.value is None},
        "unstable": sum(1 for s in samples if s["unstable"]), "excluded": excluded, "samples": samples,
    }
