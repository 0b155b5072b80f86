"""Improve a judge from its disagreements with human labels, measured on samples it never saw.

``align`` splits the labelled samples (seeded) into a training and a held-out part, grades the
training part with the current version, turns the disagreements there into few-shot examples (the
human label, and the human's note as the reasoning, are the expected answer), saves them as a new
version of the judge, then grades the held-out part with the old and the new version and reports
κ (binary judges) or Spearman (range judges) before and after, with intervals. No figure it
reports is measured on a sample it learned from.
"""

from __future__ import annotations

import threading
from typing import cast

import numpy as np

from studio.core.json_types import JsonObject
from studio.core.kinds import get_kind, kinds
from studio.core.models import BinaryShot, GraderBase, RangeJudge, RangeShot, Sample
from studio.core.models.labels import DEFAULT_KEY
from studio.core.store import Conflict, Library

from .agreement import agreement, judge_calls, kappa_change
from .runner import ProgressCallback, RunOptions, execute_run, start_run

MAX_SHOTS = 8


class AlignOptions(RunOptions):
    labels: str = DEFAULT_KEY
    holdout: float = 0.3
    seed: int = 0
    max_shots: int = MAX_SHOTS


def _split(ids: list[str], holdout: float, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    shuffled = [ids[i] for i in rng.permutation(len(ids))]
    n_hold = min(len(ids) - 1, max(1, round(holdout * len(ids))))
    return shuffled[n_hold:], shuffled[:n_hold]


def _grade(library: Library, key: str, version: int, dataset: str, indices: list[int], options: RunOptions,
           on_progress: ProgressCallback | None, cancel: threading.Event) -> int:
    run_options = options.model_copy(update={"version": version, "samples": sorted(indices), "limit": None})
    run = start_run(library, key, dataset, RunOptions.model_validate(run_options.model_dump()))
    execute_run(library, run.id, on_progress=on_progress, cancel=cancel)
    return run.id


def align(library: Library, judge_key: str, dataset: str, options: AlignOptions | None = None, *,
          on_progress: ProgressCallback | None = None, cancel: threading.Event | None = None) -> JsonObject:
    options = options or AlignOptions()
    cancel = cancel or threading.Event()
    if not 0.0 < options.holdout < 1.0:
        raise Conflict(f"--holdout must be between 0 and 1 (got {options.holdout})")
    record = library.graders.get(judge_key)
    if record.locked:
        raise Conflict(f"grader {judge_key!r} is locked: unlock it to save an aligned version")
    old_version = options.version or record.current_version
    definition = library.graders.version(judge_key, old_version).definition
    learns = get_kind(definition.kind).align  # what its labels teach it: "verdict" or "score" (Kind.align)
    if learns is None:
        alignable = [name for name, kind in kinds().items() if kind.align is not None]
        raise Conflict(f"align adds few-shot examples; a {definition.kind} grader has none "
                       f"(align works on {', '.join(alignable)})")
    binary = learns == "verdict"
    labels = library.labels.current(dataset, options.labels)
    usable = {sid: lab for sid, lab in labels.items()
              if (lab.verdict in ("PASS", "FAIL") if binary else lab.score is not None)}
    index_of = {sid: i for i, sid in enumerate(library.labels.sample_ids(dataset))}
    ids = [sid for sid in index_of if sid in usable]
    if len(ids) < 4:
        raise Conflict(f"align needs at least 4 samples labelled {'PASS/FAIL' if binary else 'with a score'} "
                       f"in label set {options.labels!r} of {dataset!r} (found {len(ids)})")
    train, held = _split(ids, options.holdout, options.seed)
    train_run = _grade(library, judge_key, old_version, dataset, [index_of[s] for s in train], options,
                       on_progress, cancel)
    train_report = agreement(library, train_run, options.labels, sample_ids=set(train), seed=options.seed)
    shots = _shots(library, dataset, definition, train_report["disagreements"], options.max_shots, binary)
    report: JsonObject = {
        "judge": judge_key, "dataset": dataset, "labels": options.labels, "seed": options.seed,
        "holdout": options.holdout, "n_train": len(train), "n_holdout": len(held),
        "holdout_ids": sorted(held, key=index_of.__getitem__), "train_run": train_run,
        "train_disagreements": len(train_report["disagreements"]), "shots_added": len(shots),
        "old_version": old_version, "new_version": None, "measured_on": "held-out samples only",
        "statistic": "cohen_kappa" if binary else "spearman",
    }
    if not shots:
        report["note"] = "the judge agrees with every training label: nothing to learn, no new version saved"
        return report
    # the field the kind declares for them (Kind.align): examples for verdicts, shots for scores
    field = "examples" if binary else "shots"
    existing = getattr(definition, field)
    aligned = definition.model_copy(update={field: [*existing, *shots]})
    saved = library.graders.save(aligned, message=(
        f"align: {len(shots)} few-shot examples from disagreements with labels {options.labels!r} on "
        f"{dataset} ({len(train)} training samples, seed {options.seed})"))
    report["new_version"] = saved.current_version
    held_idx = [index_of[s] for s in held]
    before = _grade(library, judge_key, old_version, dataset, held_idx, options, on_progress, cancel)
    after = _grade(library, judge_key, saved.current_version, dataset, held_idx, options, on_progress, cancel)
    report["before"] = _side(agreement(library, before, options.labels, sample_ids=set(held), seed=options.seed))
    report["after"] = _side(agreement(library, after, options.labels, sample_ids=set(held), seed=options.seed))
    if binary:
        report["change"] = _binary_change(library, before, after, {s: usable[s].verdict for s in held}, options)
    else:
        s_before, s_after = report["before"]["spearman"], report["after"]["spearman"]
        report["change"] = {"spearman_delta": None if s_before is None or s_after is None else s_after - s_before}
    return report


def _side(report: JsonObject) -> JsonObject:
    keys = ("run_id", "grader_version", "n", "accuracy", "cohen_kappa", "kappa_ci", "kappa_reading",
            "spearman", "spearman_ci", "mae", "mae_ci", "excluded", "undefined")
    out = {k: report.get(k) for k in keys}
    out["disagreements"] = len(report["disagreements"])
    return out


def _binary_change(library: Library, before: int, after: int, human: JsonObject,
                   options: AlignOptions) -> JsonObject:
    a, b = judge_calls(library, before), judge_calls(library, after)
    both = [s for s in human if s in a and s in b and a[s].verdict and b[s].verdict]
    return kappa_change([human[s] for s in both], [a[s].verdict for s in both], [b[s].verdict for s in both],
                        key=options.labels, seed=options.seed)


def _shots(library: Library, dataset: str, definition: GraderBase, disagreements: list[JsonObject],
           limit: int, binary: bool) -> list[BinaryShot | RangeShot]:
    shots: list[BinaryShot | RangeShot] = []
    record = library.datasets.get(dataset)
    for item in disagreements[:limit]:
        sample: Sample = next(library.datasets.iter_samples(record.id, offset=item["idx"], limit=1))
        note = (item.get("human_note") or "").strip()
        if binary:
            reasoning = note or f"A human reviewer judged this {item['human']}."
            shots.append(BinaryShot(messages=sample.messages, completion=sample.completion or "",
                                    reasoning=reasoning, verdict=item["human"]))
        else:
            # the kind that learns scores (Kind.align "score") is the range judge, with its range
            low, high = cast(RangeJudge, definition).score_range
            score = int(round(min(high, max(low, float(item["human"])))))
            reasoning = note or f"A human reviewer scored this {score}."
            shots.append(RangeShot(messages=sample.messages, completion=sample.completion or "",
                                   reasoning=reasoning, score=score))
    return shots

