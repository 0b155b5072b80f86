"""Bias probes: run a judge on a dataset's samples and on perturbed copies, and measure the shift.

Why: the known failure modes of LLM judges are invisible in one run's scores. Each probe compares
the judge with itself on the same samples, so the numbers are paired:

* ``verbosity``: the completion followed by a neutral paragraph that adds no facts. A fair judge
  does not move; the flag is raised when the paired 95% interval of the shift lies above
  ``MIN_SHIFT`` (0.02).
* ``reference``: the reference answer replaced by another sample's. A judge that reads its
  reference drops; the flag is raised when the shift's interval does NOT lie below ``-MIN_SHIFT``.
* ``position`` (pairwise judges): both orders of every pair; the position consistency and the
  first-position preference, flagged when the preference's interval lies outside one half
  ± ``MIN_PREFERENCE`` (0.02).
* ``repeat``: the same calls repeated with the cache off; Fleiss' κ over repeats and the score's
  standard deviation, flagged when the interval of the share of samples whose verdict changes
  between repeats lies above ``MIN_FLIP_RATE`` (5%).

A sample that errors in either arm is left out of that probe (``n`` says how many were compared);
a number that cannot be computed is ``None`` with its reason, never 0.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
from collections.abc import Callable, Sequence

from studio.core import stats
from studio.core.errors import StudioError
from studio.core.graders.registry import make_scorer
from studio.core.graders.text import normalize
from studio.core.json_types import JsonObject
from studio.core.kinds import get_kind
from studio.core.models import (
    GraderDefinition,
    Outcome,
    Sample,
)
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD, decide_outcome, verdict_in
from studio.core.scoring import GradingContext, Scorer
from studio.core.store.library import Library
from studio.core.store.panel_stats import pairwise_summary
from studio.core.store.probe_reports import ProbeReportRepository

PROBES = ("verbosity", "reference", "position", "repeat")
DEFAULT_REPEATS = 3

#: neutral padding: general remarks on answering that state no fact about any question; the probe
#: checks a chosen paragraph does not contain the sample's reference answer
PADDING = (
    "To put this answer in context, it is worth restating the question carefully and reading it "
    "more than once, because a precise question deserves a precise reply. The points above were "
    "written to be read on their own, and anyone who wants to go further can check them against a "
    "standard textbook or another trustworthy source on the subject before relying on them.",
    "It is always good practice to consider a question from more than one angle before settling on "
    "a reply. A careful reader will notice that the wording of the question matters, and that a "
    "short answer can be as useful as a long one. The remarks in this paragraph are general advice "
    "about reading answers and do not change the reply given above in any way.",
)

ProbeProgress = Callable[[str, int, int], None]


class ProbeError(StudioError):
    """A probe that cannot run as asked (not a judge, a pairwise probe on a single judge ...)."""


def padded(text: str, reference: str | None) -> str | None:
    """``text`` with the first padding paragraph that does not contain the reference (as whole
    words), or None when every paragraph does (the sample is then left out of the probe)."""
    ref = normalize(reference or "")
    for paragraph in PADDING:
        if not ref or f" {ref} " not in f" {normalize(paragraph)} ":
            return f"{text}\n\n{paragraph}"
    return None


def reference_of(sample: Sample) -> str | None:
    value = sample.metadata.get("expected", sample.expected)
    return None if value is None else str(value)


def with_reference(sample: Sample, reference: str) -> Sample:
    """The sample with every place a judge reads its reference from set to ``reference``."""
    metadata = dict(sample.metadata)
    if "expected" in metadata or sample.expected is None:
        metadata["expected"] = reference
    fields = dict(sample.fields)
    if "expected" in fields:
        fields["expected"] = reference
    return sample.model_copy(update={"expected": reference if sample.expected is not None else None,
                                     "metadata": metadata, "fields": fields})


def with_padding(grader: GraderDefinition, sample: Sample) -> Sample | None:
    """The completion under judgement padded (answer A for a pairwise judge); None when no
    padding paragraph is free of the sample's reference."""
    reference = reference_of(sample)
    if (source := grader.judged_field()) != "completion":
        metadata, fields = dict(sample.metadata), dict(sample.fields)
        place = metadata if source in metadata else fields
        text = padded(str(place.get(source) or ""), reference)
        if text is None:
            return None
        place[source] = text
        return sample.model_copy(update={"metadata": metadata, "fields": fields})
    text = padded(sample.completion or "", reference)
    return None if text is None else sample.model_copy(update={"completion": text})


def swapped_references(samples: Sequence[Sample]) -> list[tuple[int, Sample]]:
    """(index, copy) pairs: each sample with a reference gets the next different one (cyclically)."""
    refs = [(i, reference_of(s)) for i, s in enumerate(samples)]
    refs = [(i, r) for i, r in refs if r]
    out: list[tuple[int, Sample]] = []
    for position, (i, ref) in enumerate(refs):
        for step in range(1, len(refs)):
            other = refs[(position + step) % len(refs)][1]
            if other and other.strip().lower() != (ref or "").strip().lower():
                out.append((i, with_reference(samples[i], other)))
                break
    return out


#: the smallest effect each probe flags, so a judge is never flagged by a floating-point residue (a
#: perfectly steady judge's interval of 0 flips has a lower bound of 1e-17, not 0): a shift in score
#: units, a first-position preference away from one half, a share of samples whose verdict flips
MIN_SHIFT = 0.02
MIN_PREFERENCE = 0.02
MIN_FLIP_RATE = 0.05
#: each probe's rule as its report states it (``"rule"``), the same words docs/judge-biases.md gives
RULES = {
    "up": f"flagged when the shift's 95% interval lies above +{MIN_SHIFT:g}",
    "not_down": f"flagged unless the shift's 95% interval lies below -{MIN_SHIFT:g}",
    "position": f"flagged when the first-position rate's 95% interval lies outside 0.5 ± {MIN_PREFERENCE:g}",
    "repeat": f"flagged when the flip rate's 95% interval lies above {MIN_FLIP_RATE:.0%}",
}


def verdict_of(outcome: Outcome, threshold: float) -> str | None:
    """The categorical verdict of an outcome: a pairwise judge's A/B/TIE/inconsistent, a judge's own
    verdict when it gives one, else PASS/FAIL by the pass rule (models/pass_rule)."""
    pairwise = outcome.details.get("pairwise")
    if isinstance(pairwise, dict) and outcome.status in ("ok", "skipped"):
        return str(pairwise.get("verdict"))
    own = verdict_in(outcome.details)
    if outcome.status == "skipped":
        return own if isinstance(own, str) else "NA"
    if outcome.status != "ok" or outcome.score is None:
        return None
    if isinstance(own, str):
        return own
    return "PASS" if decide_outcome(outcome, threshold) == "pass" else "FAIL"


def passed(outcome: Outcome, threshold: float) -> bool:
    return decide_outcome(outcome, threshold) == "pass"


def shift_probe(before: Sequence[Outcome], after: Sequence[Outcome], threshold: float,
                direction: str) -> JsonObject:
    """Mean paired shift (after - before) with its interval, flip rate, and the flag.

    ``direction`` "up": biased when the shift's interval lies above ``MIN_SHIFT`` (verbosity);
    "not_down": biased unless it lies below ``-MIN_SHIFT`` (a judge that ignores what changed)."""
    pairs = [(b, a) for b, a in zip(before, after, strict=True)
             if b.status == "ok" and a.status == "ok" and b.score is not None and a.score is not None]
    n = len(pairs)
    result: JsonObject = {"n": n, "mean_shift": None, "ci": None, "flip_rate": None, "flag": None,
                              "rule": RULES[direction]}
    if not n:
        result["reason"] = ("no sample was scored in both arms (errors, NA and inconsistent pairwise "
                            "verdicts are left out)")
        return result
    shift = stats.mean_difference([float(b.score) for b, _ in pairs if b.score is not None],
                                  [float(a.score) for _, a in pairs if a.score is not None])  # (every pair has both)
    flips = stats.proportion(sum(passed(b, threshold) != passed(a, threshold) for b, a in pairs), n)
    result.update(mean_shift=shift.value, ci=shift.ci_list(), flip_rate=flips.value, flip_rate_ci=flips.ci_list())
    if shift.ci is None:
        result["reason"] = "fewer than 2 samples: no interval, so no flag"
    elif direction == "up":
        result["flag"] = shift.ci[0] > MIN_SHIFT
    else:
        result["flag"] = not shift.ci[1] < -MIN_SHIFT
    return result


def repeat_probe(passes: Sequence[Sequence[Outcome]], threshold: float) -> JsonObject:
    """Fleiss' κ of the verdicts over repeats, the mean per-sample score sd, the flip rate; flagged
    when the flip rate's interval lies above ``MIN_FLIP_RATE``."""
    rows: list[list[str]] = []
    sds: list[float] = []
    for outcomes in zip(*passes, strict=True):
        verdicts = [verdict_of(o, threshold) for o in outcomes]
        if any(v is None for v in verdicts):
            continue
        rows.append([v for v in verdicts if v is not None])
        scores = [o.score for o in outcomes if o.status == "ok" and o.score is not None]
        if len(scores) == len(outcomes):
            sds.append(statistics.stdev(scores))
    n = len(rows)
    result: JsonObject = {"n": n, "repeats": len(passes), "kappa": None, "kappa_ci": None, "sd": None,
                              "flip_rate": None, "flag": None, "rule": RULES["repeat"]}
    if not n:
        result["reason"] = "no sample was graded in every repeat"
        return result
    kappa = stats.fleiss_kappa_interval(rows)
    flips = stats.proportion(sum(len(set(r)) > 1 for r in rows), n)
    result.update(kappa=kappa.value, kappa_ci=kappa.ci_list(), sd=statistics.fmean(sds) if sds else None,
                  flip_rate=flips.value, flip_rate_ci=flips.ci_list(),
                  flag=flips.ci is not None and flips.ci[0] > MIN_FLIP_RATE)
    if kappa.value is None:
        result["kappa_reason"] = kappa.reason
    return result


def position_probe(outcomes: Sequence[Outcome]) -> JsonObject:
    rows = [(o.details["pairwise"]["verdict"], int(o.details["pairwise"]["first_picks"]),
             int(o.details["pairwise"]["decisive"])) for o in outcomes if "pairwise" in o.details]
    summary = pairwise_summary(rows)
    values, cis = summary["pairwise"], summary["pairwise_ci"]
    first_ci = cis["first_position_rate"]
    result: JsonObject = {
        "n": len(rows),
        "position_consistency": values["position_consistency"],
        "position_consistency_ci": cis["position_consistency"],
        "first_position_rate": values["first_position_rate"],
        "first_position_rate_ci": first_ci,
        "flip_rate": values["inconsistent"],
        "flag": None if first_ci is None else (first_ci[0] > 0.5 + MIN_PREFERENCE
                                               or first_ci[1] < 0.5 - MIN_PREFERENCE),
        "rule": RULES["position"],
    }
    if summary["pairwise_undefined"]:
        result["undefined"] = summary["pairwise_undefined"]
    return result


class ProbeRunner:
    """Grades lists of samples with one judge, in the scorer's batches, on one asyncio loop."""

    def __init__(self, grader: GraderDefinition, library: Library, endpoint: str | None,
                 cancel: threading.Event, on_progress: ProbeProgress | None) -> None:
        self.grader = grader
        self.library = library
        self.endpoint = endpoint
        self.cancel = cancel
        self.on_progress = on_progress
        #: stage -> samples that errored there
        self.errors: dict[str, int] = {}

    async def grade(self, stage: str, samples: Sequence[Sample], *, use_cache: bool = True) -> list[Outcome]:
        ctx = GradingContext(library=self.library, endpoint=self.endpoint, use_cache=use_cache, cancel=self.cancel)
        scorer: Scorer = make_scorer(self.grader, ctx)
        out: list[Outcome] = []
        try:
            size = scorer.batch_size or len(samples) or 1
            for start in range(0, len(samples), size):
                if self.cancel.is_set():
                    raise ProbeError("the probe was cancelled")
                out.extend(await scorer.score_batch(samples[start:start + size]))
                if self.on_progress is not None:
                    self.on_progress(stage, len(out), len(samples))
        finally:
            await scorer.aclose()
            ctx.close()
        failed = sum(o.status in ("error", "invalid") for o in out)
        if failed:
            self.errors[stage] = failed
        return out


def check_probes(grader: GraderDefinition, names: Sequence[str]) -> list[str]:
    """The probes asked for, refused by one sentence when one cannot apply to this judge."""
    if not get_kind(grader.kind).probed:
        raise ProbeError(f"{grader.key} is a {grader.kind} grader; bias probes measure LLM judges and juries")
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise ProbeError(f"unknown probe {unknown[0]!r}; choose from {', '.join(PROBES)}")
    if "position" in names and not get_kind(grader.kind).pairs:
        raise ProbeError(f"the position probe needs a pairwise judge; {grader.key} is a {grader.kind}")
    return list(dict.fromkeys(names))


def default_probes(grader: GraderDefinition) -> list[str]:
    return [p for p in PROBES if p != "position" or get_kind(grader.kind).pairs]


def probe_judge(library: Library, grader_key: str, dataset: str, probes: Sequence[str] | None = None, *,
                limit: int | None = None, endpoint: str | None = None, repeats: int = DEFAULT_REPEATS,
                pass_threshold: float = DEFAULT_PASS_THRESHOLD, cancel: threading.Event | None = None,
                on_progress: ProbeProgress | None = None, save: bool = True) -> JsonObject:
    """Run the probes and return ``{"probes": {NAME: {...}}, ...}``; saved for the report card."""
    record = library.graders.get(grader_key)
    grader = record.definition
    names = check_probes(grader, probes or default_probes(grader))
    if "repeat" in names and repeats < 2:
        raise ProbeError("the repeat probe needs at least 2 repeats")
    info = library.datasets.get(dataset)
    samples = [s for _, s in library.datasets.iter_indexed(info.id, limit=limit)]
    if not samples:
        raise ProbeError(f"dataset {dataset} has no samples to probe")
    from studio.core.engine.preflight import check_run_configuration

    check_run_configuration(library, grader, endpoint)
    runner = ProbeRunner(grader, library, endpoint, cancel or threading.Event(), on_progress)
    report = asyncio.run(_probe(runner, grader, samples, names, repeats, pass_threshold))
    out = {"grader": grader_key, "grader_version": record.current_version, "kind": grader.kind,
           "dataset": dataset, "samples": len(samples), "endpoint": endpoint,
           "pass_threshold": pass_threshold, "probes": report,
           # samples that errored in each arm (left out of that arm's probe)
           "errors": runner.errors}
    if save:
        out["id"] = ProbeReportRepository(library.engine).save(
            grader_key, record.current_version, dataset, endpoint, out)
    return out


async def _probe(runner: ProbeRunner, grader: GraderDefinition, samples: list[Sample], names: list[str],
                 repeats: int, threshold: float) -> JsonObject:
    report: JsonObject = {}
    base = await runner.grade("original", samples)
    for name in names:
        if name == "verbosity":
            pads = [(i, p) for i, s in enumerate(samples) if (p := with_padding(grader, s)) is not None]
            after = await runner.grade("verbosity", [p for _, p in pads])
            report[name] = shift_probe([base[i] for i, _ in pads], after, threshold, "up")
        elif name == "reference":
            swapped = swapped_references(samples)
            if not swapped:
                report[name] = {"n": 0, "mean_shift": None, "ci": None, "flip_rate": None, "flag": None,
                                "reason": "fewer than two samples carry different reference answers"}
                continue
            after = await runner.grade("reference", [s for _, s in swapped])
            report[name] = shift_probe([base[i] for i, _ in swapped], after, threshold, "not_down")
        elif name == "position":
            report[name] = position_probe(base)
        elif name == "repeat":
            passes = [await runner.grade(f"repeat {r + 1}/{repeats}", samples, use_cache=False)
                      for r in range(repeats)]
            report[name] = repeat_probe(passes, threshold)
    return report
