"""Review queues over runs (issue 48): which samples a queue holds, how well its reviewers agree,
how well each judge agrees with them, a run's numbers as adjudicated, and what a lead makes of the
settled samples (few-shot examples of a new judge version, a curated dataset).

Every statistic comes from ``studio.core.stats`` (κ and its bootstrap interval, Fleiss' κ,
Krippendorff's α, Wilson intervals) and the judge-against-humans report from the same function the
``agreement`` command uses, so a queue's numbers read like every other agreement in the studio.
Honesty: NA labels and NA or failed judge calls are left out and counted by reason; a tie between
reviewers gives no majority (left out, counted); an undefined statistic is None with its reason.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from studio.core import stats
from studio.core.json_types import JsonObject
from studio.core.kinds import get_kind
from studio.core.models import BinaryJudge
from studio.core.models.labels import Label, LabelInput
from studio.core.store import Conflict, Library
from studio.core.store.queues import Queue, QueueLabel, ReviewItem
from studio.core.store.results_query import outcome_word

from .agreement import CLASSES, JudgeCall, _binary_part, judge_calls, kappa_change, pass_threshold
from .align import _shots
from .runner import ProgressCallback, RunOptions, execute_run, start_run

Rule = Literal["random", "disagreements", "low_confidence", "failed"]
RULES: tuple[str, ...] = ("random", "disagreements", "low_confidence", "failed")
DEFAULT_MARGIN = 0.1


class QueueRule(BaseModel):
    """How a queue's samples are chosen from its runs."""

    model_config = ConfigDict(extra="forbid")

    rule: Rule
    #: random: how many samples, and the seed that makes the draw repeatable
    n: int | None = Field(default=None, ge=1)
    seed: int = 0
    #: low_confidence: a score this close to the pass threshold (either side) is low confidence
    margin: float = Field(default=DEFAULT_MARGIN, ge=0.0)
    #: disagreements within one suite run: the two graders compared
    graders: list[str] | None = None


def user_names(text: str | None) -> list[str]:
    """The user names of a comma-separated list (the CLI's --assign/--lead, the window's fields)."""
    return [n.strip() for n in (text or "").split(",") if n.strip()]


# --- choosing samples -------------------------------------------------------------------------------
def _runs_of_one_dataset(library: Library, run_ids: list[int]) -> str:
    if not run_ids:
        raise Conflict("a queue needs at least one run (--run N)")
    infos = [library.runs.get(r) for r in run_ids]
    names = {info.dataset for info in infos}
    if len(names) > 1:
        listed = ", ".join(f"run {i.id} on {i.dataset!r}" for i in infos)
        raise Conflict(f"a queue's runs must be of one dataset ({listed})")
    return infos[0].dataset


def choose(library: Library, run_ids: list[int], rule: QueueRule) -> list[tuple[str, str]]:
    """The (sample id, why) a rule picks from the runs, in dataset order."""
    _runs_of_one_dataset(library, run_ids)
    calls = {run: judge_calls(library, run) for run in run_ids}
    order: dict[str, int] = {}
    for per_run in calls.values():
        for sid, call in per_run.items():
            order.setdefault(sid, call.idx)
    chosen: dict[str, str] = {}
    if rule.rule == "random":
        if rule.n is None:
            raise Conflict("the random rule needs how many samples to draw (--n N)")
        pool = sorted(order, key=order.__getitem__)
        picks = np.random.default_rng(rule.seed).permutation(len(pool))[:rule.n]
        chosen = {pool[i]: f"random draw (seed {rule.seed})" for i in sorted(picks)}
    elif rule.rule == "disagreements":
        chosen = _disagreements(library, run_ids, rule)
    elif rule.rule == "low_confidence":
        for run, per_run in calls.items():
            threshold = pass_threshold(library, run)
            for sid, call in per_run.items():
                if call.status == "ok" and call.score is not None and abs(call.score - threshold) <= rule.margin:
                    chosen.setdefault(sid, f"run {run}: score {call.score:g} is within {rule.margin:g} "
                                           f"of the pass threshold {threshold:g}")
    else:  # failed
        for run, per_run in calls.items():
            for sid, call in per_run.items():
                if call.verdict == "FAIL":
                    chosen.setdefault(sid, f"run {run}: FAIL" + (f" (score {call.score:g})" if call.score is not None
                                                                  else ""))
    return sorted(chosen.items(), key=lambda item: order.get(item[0], 0))


def _disagreements(library: Library, run_ids: list[int], rule: QueueRule) -> dict[str, str]:
    if rule.graders:
        if len(run_ids) != 1 or len(rule.graders) != 2:
            raise Conflict("disagreements between two graders need one suite run and two grader keys "
                           "(--graders A,B)")
        a_name, b_name = rule.graders
        a = judge_calls(library, run_ids[0], a_name)
        b = judge_calls(library, run_ids[0], b_name)
    else:
        if len(run_ids) != 2:
            raise Conflict(f"disagreements compare two runs (give --run twice, got {len(run_ids)}) or two "
                           "graders of one suite run (--graders A,B)")
        a_name, b_name = f"run {run_ids[0]}", f"run {run_ids[1]}"
        a, b = judge_calls(library, run_ids[0]), judge_calls(library, run_ids[1])
    return {sid: f"{a_name} {call.verdict}, {b_name} {b[sid].verdict}" for sid, call in a.items()
            if sid in b and call.verdict and b[sid].verdict and call.verdict != b[sid].verdict}


def create_queue(library: Library, name: str, run_ids: list[int], rule: QueueRule, *,
                 labels_wanted: int = 1, assignees: list[str] | None = None,
                 leads: list[str] | None = None) -> Queue:
    dataset = _runs_of_one_dataset(library, run_ids)
    chosen = choose(library, run_ids, rule)
    record = library.datasets.get(dataset)
    return library.queues.create(name, record.id, run_ids, rule.model_dump(exclude_none=True), chosen,
                                 labels_wanted=labels_wanted, assignees=assignees or [], leads=leads or [])


def question_of(library: Library, queue: Queue) -> str:
    """The grader's question a reviewer answers: the first run's judge criteria (or prompt), else
    its description or name. What the judge *said* is never part of it."""
    if not queue.runs:
        return ""
    info = library.runs.get(queue.runs[0])
    definition = library.graders.version(info.grader_key, info.grader_version).definition
    criteria = getattr(definition, "criteria", None)
    if isinstance(criteria, str) and criteria.strip():
        return criteria.strip()
    if isinstance(criteria, list) and criteria:
        return "\n".join(f"- {getattr(c, 'text', c)}" for c in criteria)
    for field in ("prompt", "template", "description"):
        value = getattr(definition, field, None)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return f"{definition.name or info.grader_key}: does the answer pass?"


def judge_words(library: Library, item: ReviewItem) -> list[JsonObject]:
    """What each run said of a revealed item, by the pass rule (PASS / FAIL / NA / error): for the
    side-by-side view after labelling. Empty while the item is hidden."""
    out = []
    for said in item.judged or []:
        info = library.runs.get(said.run_id)
        out.append({"run_id": said.run_id, "grader": info.grader_key, "grader_version": info.grader_version,
                    "verdict": outcome_word(said.status, said.score, said.details, info.pass_threshold),
                    "score": said.score, "rationale": said.rationale or said.error or ""})
    return out


# --- the humans' answer ---------------------------------------------------------------------------
def humans_answer(labels: dict[str, QueueLabel], settled: QueueLabel | None) -> tuple[str | None, str]:
    """The humans' verdict of one sample and where it comes from: the lead's settlement when there
    is one, else the strict majority of PASS/FAIL labels. (None, reason) when there is none."""
    if settled is not None:
        return (settled.verdict, "settled") if settled.verdict in CLASSES else (None, "human_na")
    counts = Counter(label.verdict for label in labels.values() if label.verdict in CLASSES)
    if not counts:
        return None, "human_na" if labels else "unlabelled"
    (top, n), *rest = counts.most_common()
    if rest and rest[0][1] == n:
        return None, "tie"
    return top, "majority"


# --- agreement ------------------------------------------------------------------------------------
def _kappa_json(value: stats.Stat) -> JsonObject:
    return {"value": value.value, "ci": value.ci_list(), "reason": value.reason}


def reviewer_agreement(labels: dict[str, dict[str, QueueLabel]], *, seed: int = stats.DEFAULT_SEED) -> JsonObject:
    """Reviewers among themselves: Cohen's κ of every pair (on the samples both labelled PASS or
    FAIL), each reviewer against the majority of the others, and Fleiss' κ and Krippendorff's α
    over all (with bootstrap intervals). NA labels are left out (NA is no class to agree on)."""
    binary = {sid: {who: lab.verdict for who, lab in per.items() if lab.verdict in CLASSES}
              for sid, per in labels.items()}
    reviewers = sorted({who for per in binary.values() for who in per})
    pairs = []
    for a, b in itertools.combinations(reviewers, 2):
        both = [sid for sid, per in binary.items() if a in per and b in per]
        ka = stats.cohen_kappa([binary[s][a] for s in both], [binary[s][b] for s in both], CLASSES, seed=seed)
        agree = sum(binary[s][a] == binary[s][b] for s in both)
        pairs.append({"a": a, "b": b, "n": len(both), "kappa": _kappa_json(ka),
                      "agreement": agree / len(both) if both else None})
    each = []
    for who in reviewers:
        mine, theirs = [], []
        for per in binary.values():
            if who not in per:
                continue
            others = Counter(v for other, v in per.items() if other != who)
            ranked = others.most_common()
            if ranked and (len(ranked) == 1 or ranked[0][1] != ranked[1][1]):
                mine.append(per[who])
                theirs.append(ranked[0][0])
        ka = stats.cohen_kappa(mine, theirs, CLASSES, seed=seed)
        each.append({"reviewer": who, "n": len(mine), "kappa_vs_others": _kappa_json(ka)})
    rows = [list(per.values()) for per in binary.values() if len(per) >= 2]
    fleiss = stats.fleiss_kappa_interval(rows, seed=seed)
    units = [[1.0 if v == "PASS" else 0.0 for v in per.values()] for per in binary.values()]
    # with two classes the interval metric's (1 - 0)² is the nominal metric's 1: this is nominal α
    alpha = stats.krippendorff_alpha_with_interval(units, seed=seed)
    na = sum(1 for per in labels.values() for lab in per.values() if lab.verdict == "NA")
    return {"reviewers": reviewers, "pairs": pairs, "each": each,
            "fleiss_kappa": _kappa_json(fleiss), "krippendorff_alpha": _kappa_json(alpha),
            "n_multi": len(rows), "excluded": {"na_labels": na} if na else {}}


def used_as_examples(queue: Queue) -> set[str]:
    """Samples of the queue some derived judge version learned from (never measured on)."""
    return {sid for entry in queue.derived if entry.get("kind") == "judge_version" for sid in entry.get("samples", [])}


def queue_agreement(library: Library, name: str, *, seed: int = stats.DEFAULT_SEED) -> JsonObject:
    """The queue's report: reviewers among themselves, each run's judge against the humans' answer
    (side by side: a new judge version re-run on the queue beside the old), and the samples where
    humans disagree with each other or with a judge."""
    queue = library.queues.get(name)
    labels = library.queues.labels(name)
    settled = library.queues.settlements(name)
    samples = [sid for sid, _ in library.queues.samples(name)]
    learned = used_as_examples(queue)
    answers: dict[str, tuple[str | None, str]] = {
        sid: humans_answer(labels.get(sid, {}), settled.get(sid)) for sid in samples}
    report: JsonObject = {"queue": name, "dataset": queue.dataset, "size": queue.size,
                              "labels_wanted": queue.labels_wanted,
                              "humans": reviewer_agreement(labels, seed=seed),
                              "settled": len(settled), "judges": [], "disagreements": []}
    measured = [sid for sid in samples if sid not in learned]
    report["measured_on"] = (f"{len(measured)} samples" + (f" ({len(learned)} used as few-shot examples left out)"
                                                          if learned else ""))
    judged: dict[int, dict[str, JudgeCall]] = {}
    for run in queue.runs:
        calls = judged[run] = judge_calls(library, run)
        info = library.runs.get(run)
        pairs: list[tuple[Label, JudgeCall]] = []
        excluded: Counter[str] = Counter()
        for sid in measured:
            verdict, source = answers[sid]
            call = calls.get(sid)
            if verdict is None:
                excluded[source] += 1
            elif call is None:
                excluded["not_graded"] += 1
            elif call.verdict is None:
                excluded["judge_na" if call.status == "skipped" else call.status if call.status != "ok" else "no_score"] += 1
            else:
                pairs.append((Label(sample_id=sid, version=1, verdict=verdict, labeler=source, created_at=None), call))
        undefined: dict[str, str] = {}
        part = _binary_part(pairs, undefined, seed)
        report["judges"].append({"run_id": run, "grader": info.grader_key, "grader_version": info.grader_version,
                                 "n": len(pairs), "excluded": dict(excluded), "undefined": undefined,
                                 **{k: part[k] for k in ("accuracy", "cohen_kappa", "kappa_ci", "kappa_reading",
                                                         "confusion", "per_class", "warnings")}})
    report["changes"] = _changes(queue.runs, judged, {sid: answers[sid][0] for sid in measured}, seed)
    for sid in samples:
        per = labels.get(sid, {})
        given = {lab.verdict for lab in per.values() if lab.verdict in CLASSES}
        verdict, source = answers[sid]
        judges = {run: calls[sid].verdict for run, calls in judged.items() if sid in calls}
        humans_split = len(given) > 1
        judge_off = verdict is not None and any(v is not None and v != verdict for v in judges.values())
        if humans_split or judge_off:
            report["disagreements"].append({
                "sample_id": sid, "labels": {who: lab.verdict for who, lab in sorted(per.items())},
                "humans": verdict, "humans_from": source, "judges": judges,
                "settled": settled[sid].verdict if sid in settled else None,
                "why": "reviewers disagree" if humans_split else "a judge disagrees with the humans"})
    return report


def _changes(runs: list[int], judged: dict[int, dict[str, JudgeCall]], human: dict[str, str | None],
             seed: int) -> list[JsonObject]:
    """Each later run against the queue's first: κ of both against the humans on the samples both
    judged, and the change with a paired bootstrap interval (``kappa_change``, as ``compare`` has)."""
    out = []
    first = runs[0] if runs else None
    for run in runs[1:]:
        a, b = judged[first], judged[run]  # type: ignore[index]
        both = [sid for sid, verdict in human.items() if verdict is not None and sid in a and sid in b
                and a[sid].verdict is not None and b[sid].verdict is not None]
        change = kappa_change([human[s] for s in both], [a[s].verdict for s in both], [b[s].verdict for s in both],
                              seed=seed)
        out.append({"run_a": first, "run_b": run, **change})
    return out


# --- a run's numbers as adjudicated ---------------------------------------------------------------
def adjudicated(library: Library, run_id: int) -> JsonObject:
    """The run's pass rate as judged and as adjudicated (the judge's verdict replaced by a lead's
    settlement in any queue over this run; the newest settlement when several queues settle one
    sample). The stored results are never changed: the judge's verdicts stay as they were."""
    calls = judge_calls(library, run_id)
    settlements: dict[str, tuple[QueueLabel, str]] = {}
    for queue in library.queues.list():
        if run_id not in queue.runs:
            continue
        for sid, label in library.queues.settlements(queue.name).items():
            held = settlements.get(sid)
            if held is None or (label.created_at and held[0].created_at and label.created_at > held[0].created_at):
                settlements[sid] = (label, queue.name)
    judged = Counter(call.verdict for call in calls.values() if call.verdict)
    final = {sid: call.verdict for sid, call in calls.items()}
    changed = 0
    for sid, (label, _queue) in settlements.items():
        new = label.verdict if label.verdict in CLASSES else None
        if final.get(sid) != new:
            changed += 1
        final[sid] = new
    settled_counts = Counter(v for v in final.values() if v)

    def side(counts: Counter[str], basis: str) -> JsonObject:
        share = stats.proportion(counts["PASS"], counts["PASS"] + counts["FAIL"])
        return {"basis": basis, "pass": counts["PASS"], "fail": counts["FAIL"], "pass_rate": share.value,
                "pass_rate_ci": share.ci_list(), "undefined": share.reason}

    return {"run_id": run_id, "judged": side(judged, "as judged"),
            "adjudicated": side(settled_counts, "as adjudicated"),
            "settled": len(settlements), "changed": changed,
            "queues": sorted({q for _, q in settlements.values()}),
            "note": "settled samples take the lead's verdict (a settled NA leaves the pass rate); the mean "
                    "score is the judge's, as judged; the stored results are unchanged"}


def adjudicated_lines(report: JsonObject) -> list[str]:
    """The two pass rates as people read them, each saying which it is (CLI and window)."""
    def line(side: JsonObject) -> str:
        if side["pass_rate"] is None:
            return f"pass rate {side['basis']}: undefined ({side['undefined']})"
        low, high = side["pass_rate_ci"] or (None, None)
        ci = f" [{low:.1%}, {high:.1%}]" if low is not None else ""
        return (f"pass rate {side['basis']}: {side['pass_rate']:.1%}{ci} "
                f"({side['pass']} pass, {side['fail']} fail)")

    queues = ", ".join(report["queues"]) or "none"
    settled = f"{report['settled']} sample{'' if report['settled'] == 1 else 's'}"
    return [line(report["judged"]), line(report["adjudicated"]),
            f"{settled} settled by a lead (queues: {queues}), {report['changed']} of them against the judge's "
            f"verdict; {report['note']}."]


# --- from settled samples to a better judge and dataset ---------------------------------------------
def _settled_choice(library: Library, name: str, sample_ids: list[str] | None) -> dict[str, QueueLabel]:
    settled = {sid: lab for sid, lab in library.queues.settlements(name).items() if lab.verdict in CLASSES}
    if sample_ids is None:
        if not settled:
            raise Conflict(f"queue {name!r} has no sample settled PASS or FAIL: a lead settles them first "
                           f"(`grader-studio queues settle {name} SAMPLE PASS|FAIL`)")
        return settled
    missing = [sid for sid in sample_ids if sid not in settled]
    if missing:
        raise Conflict(f"only samples settled PASS or FAIL become examples or rows; not settled in queue "
                       f"{name!r}: {', '.join(missing[:5])}" + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
    return {sid: settled[sid] for sid in sample_ids}


def shots_from_queue(library: Library, name: str, judge_key: str, sample_ids: list[str] | None = None) -> JsonObject:
    """A new version of ``judge_key`` with the chosen settled samples as few-shot examples: the
    sample's thread, the lead's verdict, and the lead's note (else the reviewers' notes) as the
    reasoning. Without ``sample_ids``: every settled sample a run of the queue judged otherwise."""
    queue = library.queues.get(name)
    record = library.graders.get(judge_key)
    if record.locked:
        raise Conflict(f"grader {judge_key!r} is locked: unlock it to save a version with new examples")
    definition = library.graders.version(judge_key, record.current_version).definition
    # a judge answering PASS/FAIL: the binary judge (the one kind whose align is "verdict")
    if get_kind(definition.kind).align != "verdict" or not isinstance(definition, BinaryJudge):
        raise Conflict(f"few-shot examples from a queue's verdicts go to a judge that answers PASS/FAIL; "
                       f"{judge_key!r} is a {definition.kind}")
    settled = _settled_choice(library, name, sample_ids)
    if sample_ids is None:
        calls = [judge_calls(library, run) for run in queue.runs]
        settled = {sid: lab for sid, lab in settled.items()
                   if any(sid in c and c[sid].verdict not in (None, lab.verdict) for c in calls)}
        if not settled:
            raise Conflict(f"no settled sample of queue {name!r} was judged otherwise by its runs: name the "
                           "samples to use (--samples)")
    labels = library.queues.labels(name)
    index = {sid: i for i, sid in enumerate(library.labels.sample_ids(queue.dataset))}
    items = [{"idx": index[sid], "human": lab.verdict, "human_note": _reasoning(lab, labels.get(sid, {}))}
             for sid, lab in settled.items()]
    shots = _shots(library, queue.dataset, definition, items, len(items), True)
    saved = library.graders.save(definition.model_copy(update={"examples": [*definition.examples, *shots]}),
                                 message=f"{len(shots)} few-shot examples from review queue {name!r} "
                                         f"(settled samples: {', '.join(settled)})")
    entry = {"kind": "judge_version", "grader": judge_key, "version": saved.current_version,
             "from_version": record.current_version, "samples": list(settled)}
    library.queues.record_derived(name, entry)
    return entry


def _reasoning(settled: QueueLabel, labels: dict[str, QueueLabel]) -> str:
    if settled.note.strip():
        return settled.note.strip()
    notes = [lab.note.strip() for lab in labels.values() if lab.verdict == settled.verdict and lab.note.strip()]
    return " ".join(notes)


def dataset_from_queue(library: Library, name: str, new_name: str, sample_ids: list[str] | None = None) -> JsonObject:
    """A curated dataset of the chosen settled samples, each with the lead's verdict as its human
    label (label set ``human``), and provenance naming the source dataset, the queue and its runs."""
    queue = library.queues.get(name)
    settled = _settled_choice(library, name, sample_ids)
    record = library.datasets.get(queue.dataset)
    index = {sid: i for i, sid in enumerate(library.labels.sample_ids(queue.dataset))}
    rows = []
    for sid in sorted(settled, key=index.__getitem__):
        sample = library.datasets.sample(queue.dataset, index[sid])
        rows.append(sample.model_copy(update={"metadata": {
            **sample.metadata, "review": {"queue": name, "verdict": settled[sid].verdict,
                                          "settled_by": settled[sid].reviewer, "note": settled[sid].note}}}))
    created = library.datasets.create(new_name, rows, format=record.format, source=f"review queue {name}")
    provenance = {"kind": "curated", "source_dataset": queue.dataset, "queue": name, "runs": queue.runs,
                  "samples": [r.id for r in rows]}
    library.datasets.set_provenance(created.id, provenance)
    library.labels.put_many(new_name, [LabelInput(sample_id=sid, verdict=lab.verdict, note=lab.note,
                                                  labeler=lab.reviewer) for sid, lab in settled.items()])
    entry = {"kind": "dataset", "dataset": new_name, "samples": provenance["samples"]}
    library.queues.record_derived(name, entry)
    return {**entry, "provenance": provenance}


def rerun(library: Library, name: str, judge_key: str, options: RunOptions | None = None, *,
          on_progress: ProgressCallback | None = None, cancel: threading.Event | None = None) -> int:
    """Grade the queue's samples with ``judge_key`` (its current version unless ``options.version``)
    and add the run to the queue: its agreement then shows beside the earlier runs'."""
    queue = library.queues.get(name)
    index = {sid: i for i, sid in enumerate(library.labels.sample_ids(queue.dataset))}
    indices = sorted(index[sid] for sid, _ in library.queues.samples(name) if sid in index)
    run_options = (options or RunOptions()).model_copy(update={"samples": indices, "limit": None})
    run = start_run(library, judge_key, queue.dataset, RunOptions.model_validate(run_options.model_dump()))
    execute_run(library, run.id, on_progress=on_progress, cancel=cancel)
    library.queues.add_run(name, run.id)
    return run.id


def agreement_lines(report: JsonObject) -> list[str]:
    """A queue's agreement report as plain sentences (the window's Review page; the CLI prints the
    same figures as tables). Every interval is a 95% bootstrap interval; undefined says why."""
    def fmt(stat: JsonObject) -> str:
        if stat["value"] is None:
            return f"undefined ({stat['reason']})"
        ci = stat["ci"]
        return f"{stat['value']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")

    humans = report["humans"]
    lines = [f"{report['size']} samples, {report['settled']} settled by a lead; the judges are measured on "
             f"{report['measured_on']}.", "", "Reviewers against each other (PASS/FAIL labels; NA left out):"]
    if not humans["pairs"]:
        lines.append("  fewer than two reviewers have labelled: nothing to compare yet")
    for pair in humans["pairs"]:
        lines.append(f"  {pair['a']} vs {pair['b']}: Cohen's κ {fmt(pair['kappa'])} on {pair['n']} samples")
    for each in humans["each"]:
        lines.append(f"  {each['reviewer']} vs the others' majority: κ {fmt(each['kappa_vs_others'])} "
                     f"on {each['n']} samples")
    lines.append(f"  Fleiss' κ {fmt(humans['fleiss_kappa'])}; Krippendorff's α {fmt(humans['krippendorff_alpha'])}")
    lines += ["", "Judges against the humans (a lead's settlement, else the reviewers' majority; ties left out):"]
    for judge in report["judges"]:
        kappa = {"value": judge["cohen_kappa"], "ci": judge["kappa_ci"],
                 "reason": judge["undefined"].get("cohen_kappa", "no samples")}
        accuracy = "undefined" if judge["accuracy"] is None else f"{judge['accuracy']:.0%}"
        left = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in judge["excluded"].items()) or "none"
        lines.append(f"  run {judge['run_id']} ({judge['grader']} v{judge['grader_version']}): n {judge['n']}, "
                     f"κ {fmt(kappa)}, accuracy {accuracy}; left out: {left}")
        if judge["confusion"]:
            c = judge["confusion"]
            lines.append(f"    humans PASS: judge PASS {c['PASS']['PASS']}, FAIL {c['PASS']['FAIL']} · humans FAIL: "
                         f"judge PASS {c['FAIL']['PASS']}, FAIL {c['FAIL']['FAIL']}")
            for cls, numbers in (judge["per_class"] or {}).items():
                p, r = numbers["precision"], numbers["recall"]
                lines.append(f"    {cls}: precision {'undefined' if p is None else f'{p:.2f}'}, "
                             f"recall {'undefined' if r is None else f'{r:.2f}'}")
    for change in report.get("changes", []):
        lines.append(f"  run {change['run_b']} against run {change['run_a']}: {change['sentence']}")
    return lines
