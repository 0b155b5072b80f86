"""A run's agreement with human labels, and one run against another on the same dataset.

Both read what is stored (results, labels) and compute with ``studio.core.stats``; nothing grades.
The dictionaries they return are the JSON of ``grader-studio agreement`` / ``compare`` and what the
window's views draw, so the field names are a contract: ``n``, ``accuracy``, ``cohen_kappa``,
``kappa_ci``, ``confusion``, ``spearman``, ``kendall``, ``pearson``, ``mae``, ``excluded``,
``disagreements``; ``n_common``, ``mean_a``, ``mean_b``, ``mean_delta``, ``flips``.

Honesty rules: an NA on either side, an error and an invalid result are excluded and counted by
reason (never scored as 0); an undefined statistic is ``null`` with its reason in ``undefined``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from studio.core import stats
from studio.core.json_types import JsonArray, JsonObject
from studio.core.kinds import get_kind
from studio.core.models import RunInfo
from studio.core.models.labels import DEFAULT_KEY, Label
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD, decide, decide_result, verdict_in
from studio.core.store import Library
from studio.core.store.run_graders import grader_results, run_graders

from .summary import mean

CLASSES = ("PASS", "FAIL")


@dataclass
class JudgeCall:
    """What a run said about one sample, reduced to what agreement needs."""

    sample_id: str
    idx: int
    status: str  # ok | skipped | error | invalid
    verdict: str | None  # PASS / FAIL (None when not ok)
    score: float | None
    rationale: str | None
    #: the judge's own verdict (``details["verdict"]``), which the pass rule reads before the score
    own: str | None = None


def pass_threshold(library: Library, run_id: int, grader: str | None = None) -> float:
    """The run's pass threshold, or a suite grader's own (``grader``)."""
    if grader is not None:
        for planned in run_graders(library, run_id):
            if planned.key == grader:
                return planned.threshold
    return library.runs.get(run_id).pass_threshold


def judge_calls(library: Library, run_id: int, grader: str | None = None) -> dict[str, JudgeCall]:
    """Each graded sample's verdict by the pass rule (models/pass_rule: the judge's own PASS/FAIL
    when it gives one, else score ≥ the run's pass threshold). ``grader``: that grader's results in a suite run (else the run's rows)."""
    threshold = pass_threshold(library, run_id, grader)
    calls: dict[str, JudgeCall] = {}
    rows = library.runs.results(run_id) if grader is None else grader_results(library, run_id, grader)
    for row in rows:
        verdict = None
        if row["status"] == "ok":  # PASS or FAIL by the pass rule (its own verdict first); NA stays None
            verdict = {"pass": "PASS", "fail": "FAIL"}.get(decide_result(row, threshold))
        calls[row["sample_id"]] = JudgeCall(row["sample_id"], row["sample_idx"], row["status"], verdict,
                                            row["score"], row["rationale"] or row["error"],
                                            verdict_in(row.get("details")))
    return calls


def _stat(name: str, value: stats.Stat, out: JsonObject, undefined: dict[str, str]) -> None:
    out[name] = None if value.value is None else round(value.value, 6)
    if value.reason and value.value is None:
        undefined[name] = value.reason
    if value.ci is not None:
        out[f"{name}_ci"] = [round(value.ci[0], 6), round(value.ci[1], 6)]


def _scale(library: Library, run_id: int, dataset: str, key: str,
           human: list[float], grader: str | None = None) -> tuple[tuple[float, float] | None, str]:
    """The label set's scale, and how a judge's normalised [0, 1] score maps back onto it."""
    info = library.labels.info(dataset, key)
    if info.scale_min is not None and info.scale_max is not None:
        return (info.scale_min, info.scale_max), "the label set's scale"
    run = library.runs.get(run_id)
    name, version = run.grader_key, run.grader_version
    for planned in run_graders(library, run_id) if grader is not None else []:
        if planned.key == grader:
            name, version = planned.key, planned.version
    definition = library.graders.version(name, version).definition
    scale = get_kind(definition.kind).label_scale  # a range judge's own score range
    if scale is not None:
        low, high = scale(definition)
        return (low, high), f"the judge's score range {low:g}-{high:g}"
    if human and all(0.0 <= h <= 1.0 for h in human):
        return (0.0, 1.0), "labels within [0, 1]: the judge's score as it is"
    return None, "unknown (set one with `labels import --scale LOW-HIGH`)"


def agreement(library: Library, run_id: int, key: str = DEFAULT_KEY, *, seed: int = stats.DEFAULT_SEED,
              sample_ids: set[str] | None = None, grader: str | None = None) -> JsonObject:
    """The agreement report of one run against the label set ``key`` of its dataset (restricted to
    ``sample_ids`` when given: align measures on its held-out part only); ``grader``: one grader
    of a suite run (else the run's own rows: a suite's overall score)."""
    run = library.runs.get(run_id)
    labels = library.labels.current(run.dataset, key)
    if sample_ids is not None:
        labels = {sid: lab for sid, lab in labels.items() if sid in sample_ids}
    calls = judge_calls(library, run_id, grader)
    threshold = pass_threshold(library, run_id, grader)
    excluded: dict[str, int] = {}
    binary: list[tuple[Label, JudgeCall]] = []
    scored: list[tuple[Label, JudgeCall]] = []

    def exclude(reason: str) -> None:
        excluded[reason] = excluded.get(reason, 0) + 1

    for sid, label in labels.items():
        call = calls.get(sid)
        if call is None:
            exclude("not_graded")
        elif label.verdict == "NA":
            exclude("human_na")
        elif call.status == "skipped":
            exclude("judge_na")
        elif call.status in ("error", "invalid"):
            exclude(call.status)
        elif call.verdict is None:
            exclude("no_score")
        elif label.verdict is not None:
            binary.append((label, call))
        else:
            scored.append((label, call))
    unlabelled = sum(1 for sid in calls if sid not in labels) if sample_ids is None else 0
    if unlabelled:
        excluded["unlabelled"] = unlabelled

    report: JsonObject = {
        "run_id": run_id, "grader": grader or run.grader_key,
        "grader_version": _version_of(library, run_id, grader) if grader else run.grader_version,
        "dataset": run.dataset, "labels": key, "pass_threshold": threshold,
        "mode": "binary" if binary and not scored else "scores" if scored and not binary else
                "both" if binary else "none",
        "n": len(binary) + len(scored), "n_binary": len(binary), "n_scores": len(scored),
        "excluded": excluded, "undefined": {},
    }
    report.update(_binary_part(binary, report["undefined"], seed))
    report.update(_score_part(library, run_id, run.dataset, key, scored, report["undefined"], seed, grader))
    report["threshold_sweep"], report["best_threshold"] = _sweep(binary)
    report["binary_points"] = [{"sample_id": call.sample_id, "human": label.verdict, "judge": call.score}
                               for label, call in binary]
    disagreements = _binary_disagreements(binary, threshold) + report.pop("_score_disagreements")
    # a verdict given without a score has no distance to the threshold (None): it leads, the judge was sure
    disagreements.sort(key=lambda d: (-(math.inf if d["severity"] is None else d["severity"]), d["idx"]))
    report["disagreements"] = disagreements
    if report["n"] == 0:
        report["undefined"].setdefault("n", "no labelled sample was graded usably by this run")
    return report


def _scored(value: float | None) -> float:
    """A score the selection above guarantees (a scored label, a call that graded)."""
    if value is None:
        raise ValueError("a score was expected: the pairs hold scored labels and graded calls only")
    return float(value)


def _binary_part(pairs: list[tuple[Label, JudgeCall]], undefined: dict[str, str], seed: int) -> JsonObject:
    out: JsonObject = {"accuracy": None, "cohen_kappa": None, "kappa_ci": None, "kappa_reading": None,
                           "confusion": None, "per_class": None, "base_rate": None, "warnings": []}
    if not pairs:
        return out
    human = [lab.verdict for lab, _ in pairs]
    judge = [call.verdict for _, call in pairs]
    matrix = stats.confusion(human, judge, CLASSES)
    n = len(pairs)
    accuracy = float(np.trace(matrix)) / n  # n > 0: pairs checked above
    kappa = stats.cohen_kappa(human, judge, CLASSES, seed=seed)
    out["accuracy"] = round(accuracy, 6)
    out["cohen_kappa"] = None if kappa.value is None else round(kappa.value, 6)
    out["kappa_ci"] = kappa.ci_list()
    if kappa.value is None:
        undefined["cohen_kappa"] = kappa.reason or "undefined"
    out["kappa_reading"] = stats.landis_koch(kappa.value)
    out["confusion"] = {h: {j: int(matrix[a, b]) for b, j in enumerate(CLASSES)} for a, h in enumerate(CLASSES)}
    per_class: dict[str, dict[str, float | None]] = {}
    for i, c in enumerate(CLASSES):
        tp = int(matrix[i, i])
        said, truly = int(matrix[:, i].sum()), int(matrix[i, :].sum())
        precision = tp / said if said else None
        recall = tp / truly if truly else None
        f1 = (2 * precision * recall / (precision + recall)) if precision and recall else (
            0.0 if precision is not None and recall is not None else None)
        per_class[c] = {"precision": precision, "recall": recall, "f1": f1, "support": truly}
    out["per_class"] = per_class
    base = human.count("PASS") / n
    out["base_rate"] = round(base, 6)
    majority = max(base, 1 - base)
    if accuracy >= 0.7 and majority >= 0.7 and (kappa.value is None or kappa.value < 0.4):
        out["warnings"].append(
            f"accuracy {accuracy:.0%} looks high only because {majority:.0%} of the labels are one class: "
            f"always answering the majority class scores {majority:.0%}; read κ instead")
    return out


def _binary_disagreements(pairs: list[tuple[Label, JudgeCall]], threshold: float) -> list[JsonObject]:
    out = []
    for label, call in pairs:
        if label.verdict != call.verdict:
            # how far the score is from the line (no score, only the judge's own verdict: None, not a 0.0)
            severity = None if call.score is None else round(abs(call.score - threshold), 6)
            out.append({"sample_id": call.sample_id, "idx": call.idx, "human": label.verdict,
                        "human_note": label.note, "judge": call.verdict, "judge_score": call.score,
                        "rationale": call.rationale, "severity": severity})
    return out


def _sweep(pairs: list[tuple[Label, JudgeCall]]) -> tuple[list[JsonObject], float | None]:
    """κ of the pass rule's verdict at threshold t against the labels for each candidate t; the best
    t. A call without a score (a judge that gave its own verdict alone) keeps that verdict at every
    t: NA is not zero, and a missing score read as 0.0 made every such PASS a FAIL."""
    scores = sorted({call.score for _, call in pairs if call.score is not None})
    if len(scores) < 2:
        return [], None
    human = [lab.verdict for lab, _ in pairs]
    sweep: list[JsonObject] = []
    for t in scores:  # "score >= t" only changes at an observed score
        # the pass rule at t (the sweep asks what each threshold would make of each call)
        judge = ["PASS" if decide("ok", call.score, call.own, t) == "pass" else "FAIL" for _, call in pairs]
        k = stats.cohen_kappa(human, judge, CLASSES, ci=False).value
        accuracy = mean(sum(h == j for h, j in zip(human, judge, strict=True)), len(human))
        sweep.append({"threshold": round(float(t), 6), "kappa": None if k is None else round(k, 6),
                      "accuracy": None if accuracy is None else round(accuracy, 6)})
    defined = [s for s in sweep if s["kappa"] is not None]
    best = max(defined, key=lambda s: (s["kappa"], -abs(s["threshold"] - DEFAULT_PASS_THRESHOLD)))["threshold"] if defined else None
    return sweep, best


def _score_part(library: Library, run_id: int, dataset: str, key: str, pairs: list[tuple[Label, JudgeCall]],
                undefined: dict[str, str], seed: int, grader: str | None = None) -> JsonObject:
    out: JsonObject = {"spearman": None, "kendall": None, "pearson": None, "mae": None,
                           "quadratic_kappa": None, "scale": None, "scale_mapping": None, "points": [],
                           "_score_disagreements": []}
    if not pairs:
        return out
    human = [_scored(lab.score) for lab, _ in pairs]
    judge = [_scored(call.score) for _, call in pairs]
    scale, source = _scale(library, run_id, dataset, key, human, grader)
    out["scale"] = None if scale is None else list(scale)
    if scale is not None:
        low, high = scale
        mapped = [low + s * (high - low) for s in judge]
        out["scale_mapping"] = f"judge score s in [0, 1] -> {low:g} + s * ({high:g} - {low:g}) ({source})"
    else:
        mapped = judge
        out["scale_mapping"] = f"none: scale {source}; correlations use the judge's score as it is"
    for name in ("spearman", "kendall", "pearson"):
        _stat(name, stats.correlation(name, human, mapped, seed=seed), out, undefined)
    if scale is not None:
        _stat("mae", stats.mean_absolute_error(human, mapped, seed=seed), out, undefined)
        _qwk(human, mapped, scale, out, undefined, seed)
    else:
        undefined["mae"] = "the label scale is unknown, so the judge's score cannot be mapped onto it"
    out["points"] = [{"sample_id": call.sample_id, "human": h, "judge": round(m, 6)}
                     for (_, call), h, m in zip(pairs, human, mapped, strict=True)]
    step = 1.0 if scale is not None and _integers(human) else (
        0.1 * (scale[1] - scale[0]) if scale is not None else 0.1)
    tolerance = step / 2 if step == 1.0 else step
    out["disagreement_tolerance"] = tolerance
    for (label, call), h, m in zip(pairs, human, mapped, strict=True):
        if abs(h - m) > tolerance:
            out["_score_disagreements"].append({
                "sample_id": call.sample_id, "idx": call.idx, "human": h, "human_note": label.note,
                "judge": call.verdict, "judge_score": call.score, "judge_on_scale": round(m, 6),
                "rationale": call.rationale, "severity": round(abs(h - m), 6)})
    return out


def _integers(values: list[float]) -> bool:
    return all(abs(v - round(v)) < 1e-9 for v in values)


def _qwk(human: list[float], mapped: list[float], scale: tuple[float, float], out: JsonObject,
         undefined: dict[str, str], seed: int) -> None:
    low, high = scale
    if not (_integers([low, high]) and _integers(human)):
        undefined["quadratic_kappa"] = "the labels are not on an integer scale"
        return
    if not _integers(mapped):
        undefined["quadratic_kappa"] = ("the judge's scores do not fall on the scale's integers "
                                        "(e.g. a logprob-weighted mean), so they are not the same scale")
        return
    classes = list(range(int(low), int(high) + 1))
    value = stats.cohen_kappa([round(h) for h in human], [round(m) for m in mapped], classes,
                              weights="quadratic", seed=seed)
    _stat("quadratic_kappa", value, out, undefined)


# --- run versus run ------------------------------------------------------------------------------
def _version_of(library: Library, run_id: int, grader: str) -> int | None:
    return next((g.version for g in run_graders(library, run_id) if g.key == grader), None)


def suite_agreement(library: Library, run_id: int, key: str = DEFAULT_KEY, *,
                    seed: int = stats.DEFAULT_SEED) -> JsonObject:
    """Agreement per grader of a suite run: {grader key: its report}."""
    return {g.key: agreement(library, run_id, key, seed=seed, grader=g.key) for g in run_graders(library, run_id)}


def suite_compare(library: Library, run_a: int, run_b: int, key: str = DEFAULT_KEY, *,
                  seed: int = stats.DEFAULT_SEED) -> JsonObject:
    """Compare per grader: every grader key both runs graded gets its own report (flips, paired
    interval); the graders only one run has are listed apart."""
    keys_a = [g.key for g in run_graders(library, run_a)]
    keys_b = {g.key for g in run_graders(library, run_b)}
    common = [k for k in keys_a if k in keys_b]
    return {
        "run_a": run_a, "run_b": run_b,
        "graders": {k: compare(library, run_a, run_b, key, seed=seed, grader=k) for k in common},
        "only_a": [k for k in keys_a if k not in keys_b], "only_b": sorted(keys_b - set(keys_a)),
    }


def compare(library: Library, run_a: int, run_b: int, key: str = DEFAULT_KEY, *,
            seed: int = stats.DEFAULT_SEED, grader: str | None = None) -> JsonObject:
    """Run B against run A on the samples both scored; with labels, both runs' agreement on the
    labelled samples both scored, and the change in κ with a paired bootstrap interval."""
    info_a, info_b = library.runs.get(run_a), library.runs.get(run_b)
    if info_a.dataset != info_b.dataset and not same_inputs(library, info_a.dataset, info_b.dataset):
        from studio.core.store import Conflict

        raise Conflict(f"run {run_a} is on dataset {info_a.dataset!r} and run {run_b} on "
                       f"{info_b.dataset!r}: compare needs two runs on the same dataset (or on two "
                       "datasets generated from the same one)")
    calls_a, calls_b = judge_calls(library, run_a, grader), judge_calls(library, run_b, grader)
    common = [sid for sid, a in calls_a.items()
              if a.status == "ok" and a.score is not None and sid in calls_b
              and calls_b[sid].status == "ok" and calls_b[sid].score is not None]
    common.sort(key=lambda sid: calls_a[sid].idx)
    not_common: dict[str, int] = {}
    for sid in set(calls_a) | set(calls_b):
        if sid in common:
            continue
        for side, calls in (("a", calls_a), ("b", calls_b)):
            call = calls.get(sid)
            reason = "not_graded" if call is None else ("na" if call.status == "skipped" else call.status)
            if call is None or call.status != "ok":
                name = f"{side}_{reason}"
                not_common[name] = not_common.get(name, 0) + 1
    a = [_scored(calls_a[s].score) for s in common]
    b = [_scored(calls_b[s].score) for s in common]
    delta = stats.mean_difference(a, b, seed=seed)
    flips, only_a, only_b = [], 0, 0
    for sid in common:
        ca, cb = calls_a[sid], calls_b[sid]
        if ca.verdict != cb.verdict:
            if ca.verdict == "PASS":
                only_a += 1
            else:
                only_b += 1
            flips.append({"sample_id": sid, "idx": ca.idx, "a": {"verdict": ca.verdict, "score": ca.score,
                                                                   "rationale": ca.rationale},
                          "b": {"verdict": cb.verdict, "score": cb.score, "rationale": cb.rationale}})
    mcnemar = stats.mcnemar_exact(only_a, only_b)
    report: JsonObject = {
        "run_a": _run_summary(library, info_a, grader), "run_b": _run_summary(library, info_b, grader),
        "dataset": info_a.dataset, "grader": grader,
        "n_common": len(common), "excluded": not_common,
        "mean_a": None if not a else round(float(np.mean(a)), 6),
        "mean_b": None if not b else round(float(np.mean(b)), 6),
        "mean_delta": None if delta.value is None else round(delta.value, 6),
        "mean_delta_ci": delta.ci_list(),
        "wins": sum(y > x for x, y in zip(a, b, strict=True)),
        "losses": sum(y < x for x, y in zip(a, b, strict=True)),
        "ties": sum(y == x for x, y in zip(a, b, strict=True)),
        "flips": flips, "pass_a_fail_b": only_a, "fail_a_pass_b": only_b,
        "mcnemar_p": mcnemar.value, "mcnemar_note": mcnemar.reason,
        "undefined": {} if delta.value is not None else {"mean_delta": delta.reason},
    }
    report["labels"] = _labelled_side_by_side(library, info_a.dataset, key, calls_a, calls_b, common, seed)
    return report


def same_inputs(library: Library, a: str, b: str) -> bool:
    """Two datasets whose completions answer the same inputs: both generated from one source
    dataset (``grader-studio generate``: two models' answers), or one generated from the other.
    Their samples keep the source's ids, so runs over them are compared sample by sample."""
    def source(name: str) -> str:
        provenance = library.datasets.get(name).provenance or {}
        return str(provenance.get("source_dataset") or name) if provenance.get("kind") == "generated" else name

    return source(a) == source(b)


def _model_of(library: Library, dataset: str) -> JsonObject | None:
    """The endpoint and model that generated ``dataset``'s completions (None: imported)."""
    provenance = library.datasets.get(dataset, include_deleted=True).provenance or {}
    if provenance.get("kind") != "generated":
        return None
    return {"endpoint": provenance.get("endpoint"), "model": provenance.get("model")}


def _run_summary(library: Library, info: RunInfo, grader: str | None = None) -> JsonObject:
    where = {"dataset": info.dataset, "generated_by": _model_of(library, info.dataset)}
    if grader is not None:
        return {"id": info.id, "grader": grader, "grader_version": _version_of(library, info.id, grader),
                "endpoint": info.endpoint, "status": info.status,
                "pass_threshold": pass_threshold(library, info.id, grader), **where}
    return {"id": info.id, "grader": info.grader_key, "grader_version": info.grader_version,
            "endpoint": info.endpoint, "status": info.status,
            "pass_threshold": info.pass_threshold, **where}


def _labelled_side_by_side(library: Library, dataset: str, key: str, calls_a: dict[str, JudgeCall],
                           calls_b: dict[str, JudgeCall], common: list[str], seed: int) -> JsonObject | None:
    labels = library.labels.current(dataset, key)
    pairs = [(labels[s].verdict, calls_a[s].verdict, calls_b[s].verdict) for s in common
             if s in labels and labels[s].verdict in CLASSES]
    if not labels:
        return None
    return kappa_change([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs], key=key, seed=seed)


def kappa_change(human: JsonArray, before: JsonArray, after: JsonArray, *, key: str = DEFAULT_KEY,
                 seed: int = stats.DEFAULT_SEED) -> JsonObject:
    """κ of two judges against the same labels on the same samples, and κ(after) − κ(before) with a
    paired bootstrap interval (both resampled with the same sample indices)."""
    n = len(human)
    ka = stats.cohen_kappa(human, before, CLASSES, seed=seed)
    kb = stats.cohen_kappa(human, after, CLASSES, seed=seed)
    out: JsonObject = {"key": key, "n": n,
                           "kappa_a": ka.value, "kappa_a_ci": ka.ci_list(), "kappa_a_reason": ka.reason,
                           "kappa_b": kb.value, "kappa_b_ci": kb.ci_list(), "kappa_b_reason": kb.reason,
                           "accuracy_a": mean(sum(h == x for h, x in zip(human, before, strict=True)), n),
                           "accuracy_b": mean(sum(h == x for h, x in zip(human, after, strict=True)), n),
                           "kappa_delta": None, "kappa_delta_ci": None}
    if ka.value is not None and kb.value is not None:
        out["kappa_delta"] = kb.value - ka.value
        index = {c: i for i, c in enumerate(CLASSES)}
        h = np.array([index[x] for x in human])
        a = np.array([index[x] for x in before])
        b = np.array([index[x] for x in after])

        def diff(hh: np.ndarray, aa: np.ndarray, bb: np.ndarray) -> float | None:
            va = stats.kappa_from_confusion(stats.confusion_codes(hh.astype(int), aa.astype(int), 2)).value
            vb = stats.kappa_from_confusion(stats.confusion_codes(hh.astype(int), bb.astype(int), 2)).value
            return None if va is None or vb is None else vb - va

        ci, _ = stats.bootstrap(diff, h, a, b, seed=seed)
        out["kappa_delta_ci"] = None if ci is None else list(ci)
    out["sentence"] = _sentence(out)
    return out


def _sentence(out: JsonObject) -> str:
    def fmt(value: float | None, ci: list[float] | None) -> str:
        if value is None:
            return "undefined"
        return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")

    if out["kappa_delta"] is None:
        return (f"κ {fmt(out['kappa_a'], out['kappa_a_ci'])} -> {fmt(out['kappa_b'], out['kappa_b_ci'])} "
                f"on {out['n']} labelled samples (the change is undefined)")
    verb = "raises" if out["kappa_delta"] > 0 else "lowers" if out["kappa_delta"] < 0 else "keeps"
    ci = out["kappa_delta_ci"]
    return (f"B {verb} κ from {out['kappa_a']:.2f} to {out['kappa_b']:.2f} on {out['n']} labelled samples "
            f"(change {out['kappa_delta']:+.2f}" + (f", 95% interval [{ci[0]:+.2f}, {ci[1]:+.2f}])" if ci else ")"))


