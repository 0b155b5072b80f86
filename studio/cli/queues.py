"""``grader-studio queues ...``: review queues for a team (docs/review.md).

A lead creates a queue from runs (``create``), names its reviewers (``assign``) and reads how they
agree (``agreement``), settles samples (``settle``) and turns settled ones into a judge's few-shot
examples (``shots``) or a curated dataset (``dataset``); ``rerun`` grades the queue with a new
judge version, shown beside the old in ``agreement``. A reviewer works blind: ``next`` shows the
next sample's thread and the grader's question, never the judge's verdict or another reviewer's
label; ``label`` records theirs and only then shows both, side by side (the store decides what
may be shown: ``QueueRepository.item``).
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag, write_or_print
from .parsers import Subparsers

if TYPE_CHECKING:
    from studio.core.engine.sections import RunSections
    from studio.core.models import RunInfo
    from studio.core.store.library import Library

    from .run_show import SummaryJson, SummaryPrinter

#: what a reviewer may type for a verdict (the window's P / F / N keys, or the word)
VERDICT_WORDS = {"p": "PASS", "pass": "PASS", "f": "FAIL", "fail": "FAIL", "n": "NA", "na": "NA"}


def _verdict(text: str) -> str | None:
    if text.lower() in ("clear", "none", "-"):
        return None
    try:
        return VERDICT_WORDS[text.lower()]
    except KeyError:
        raise CliError(f"a verdict is P, F or N (PASS, FAIL, NA), or 'clear' (got {text!r})", 2) from None


def _names(text: str | None) -> list[str]:
    from studio.core.engine.queues import (
        user_names,  # the engine's, which the window's dialog reads too
    )

    return user_names(text)


def cmd_create(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.queues import QueueRule, create_queue

    rule = QueueRule(rule=args.rule.replace("-", "_"), n=args.n, seed=args.seed, margin=args.margin,
                     graders=_names(args.graders) or None)
    if args.n is not None and rule.rule != "random":
        raise CliError("--n draws a random sample: give it with --rule random", 2)
    queue = create_queue(app.library, args.name, args.run, rule, labels_wanted=args.labels_wanted,
                         assignees=_names(args.assign), leads=_names(args.lead))
    if args.json:
        app.print_json(queue.model_dump(mode="json"))
    else:
        print(f"queue {queue.name!r}: {queue.size} samples of {queue.dataset} from runs "
              f"{', '.join(map(str, queue.runs))} ({_rule_text(queue.rule)}); {queue.labels_wanted} label(s) "
              f"wanted per sample; reviewers: {queue.who}; leads: {', '.join(queue.leads)}")
    return 0


def _rule_text(rule: JsonObject) -> str:
    name = str(rule.get("rule", "?"))
    if name == "random":
        return f"random {rule.get('n')} with seed {rule.get('seed', 0)}"
    if name == "low_confidence":
        return f"scores within {rule.get('margin')} of the pass threshold"
    if name == "disagreements" and rule.get("graders"):
        return f"disagreements between {' and '.join(rule['graders'])}"
    return {"disagreements": "disagreements between the runs", "failed": "everything the judge failed"}.get(name, name)


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    queues = app.library.queues.list()
    if args.json:
        app.print_json([q.model_dump(mode="json") for q in queues])
        return 0
    if not queues:
        print("no review queues (create one: grader-studio queues create NAME --run N --rule failed)")
        return 0
    rows = []
    for q in queues:
        progress = app.library.queues.progress(q.name)
        done = sum(p.labelled for p in progress)
        rows.append([q.name, q.dataset, ",".join(map(str, q.runs)), _rule_text(q.rule), q.size,
                     f"{done}/{q.size * q.labels_wanted}", q.who])
    app.print_table(rows, ["QUEUE", "DATASET", "RUNS", "RULE", "SAMPLES", "LABELS", "REVIEWERS"])
    return 0


def cmd_show(args: argparse.Namespace, app: CliApp) -> int:
    lib = app.library
    queue = lib.queues.get(args.name)
    progress = lib.queues.progress(args.name)
    settled = lib.queues.settlements(args.name)
    counts = {sid: len(per) for sid, per in lib.queues.labels(args.name).items()}
    samples = lib.queues.samples(args.name)
    if args.json:
        app.print_json({**queue.model_dump(mode="json"), "progress": [p.model_dump() for p in progress],
                        "settled": len(settled), "samples": [
                            {"sample_id": sid, "reason": reason, "labels": counts.get(sid, 0),
                             "settled": sid in settled} for sid, reason in samples]})
        return 0
    print(f"queue {queue.name!r} on {queue.dataset}: {queue.size} samples from runs "
          f"{', '.join(map(str, queue.runs))} ({_rule_text(queue.rule)})")
    print(f"{queue.labels_wanted} label(s) wanted per sample; reviewers: {queue.who}; leads: {', '.join(queue.leads)}")
    print(f"{len(settled)} settled by a lead")
    for entry in queue.derived:
        what = (f"judge {entry['grader']} v{entry['version']}" if entry.get("kind") == "judge_version"
                else f"dataset {entry.get('dataset')}")
        print(f"made from it: {what} ({len(entry.get('samples', []))} samples)")
    print()
    app.print_table([[p.reviewer, f"{p.labelled}/{p.total}"] for p in progress], ["REVIEWER", "LABELLED"])
    print()
    app.print_table([[sid, f"{counts.get(sid, 0)}/{queue.labels_wanted}", "yes" if sid in settled else "",
                      reason] for sid, reason in samples], ["SAMPLE", "LABELS", "SETTLED", "WHY"])
    return 0


def cmd_assign(args: argparse.Namespace, app: CliApp) -> int:
    lib = app.library
    lib.queues.require_lead(args.name)
    queue = lib.queues.assign(args.name, args.users, leads=args.lead, remove=args.remove)
    print(f"queue {queue.name!r}: reviewers {queue.who}; leads {', '.join(queue.leads)}")
    return 0


def cmd_export(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.queues import judge_words

    lib = app.library
    lib.queues.require_lead(args.name)
    labels = lib.queues.labels(args.name)
    settled = lib.queues.settlements(args.name)
    lines = []
    for sid, reason in lib.queues.samples(args.name):
        item = lib.queues.item(args.name, sid)  # a lead's view: revealed
        lines.append({"queue": args.name, "sample_id": sid, "reason": reason,
                      "labels": {who: {"verdict": lab.verdict, "note": lab.note, "version": lab.version}
                                 for who, lab in sorted(labels.get(sid, {}).items())},
                      "settled": None if sid not in settled else {
                          "verdict": settled[sid].verdict, "note": settled[sid].note, "by": settled[sid].reviewer},
                      "judges": judge_words(lib, item)})
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    write_or_print(args.output, text, f"{len(lines)} samples")
    return 0


def _print_item(app: CliApp, name: str, sample_id: str, as_json: bool) -> None:
    from studio.core.engine.queues import judge_words, question_of

    lib = app.library
    queue = lib.queues.get(name)
    item = lib.queues.item(name, sample_id)
    sample = lib.datasets.sample(queue.dataset, item.idx)
    question = question_of(lib, queue)
    judges = judge_words(lib, item)
    mine = lib.queues.progress(name)
    done = next((p.labelled for p in mine if p.reviewer == item.reviewer), 0)
    if as_json:
        app.print_json({"queue": name, "sample_id": sample_id, "position": item.position + 1, "of": queue.size,
                        "question": question, "messages": [t.model_dump() for t in sample.messages],
                        "completion": sample.completion, "revealed": item.revealed,
                        "mine": None if item.mine is None else item.mine.model_dump(mode="json"),
                        "others": None if item.others is None else [o.model_dump(mode="json") for o in item.others],
                        "judges": judges if item.revealed else None,
                        "settled": None if item.settled is None else item.settled.model_dump(mode="json"),
                        "progress": {"labelled": done, "total": queue.size}})
        return
    print(f"{name}: sample {sample_id} ({item.position + 1} of {queue.size}); you ({item.reviewer}) labelled "
          f"{done} of {queue.size}")
    print(f"question: {question}")
    for turn in sample.messages:
        print(f"  {turn.role}:")
        print(textwrap.indent(turn.content, "    "))
    if sample.completion is not None:
        print("  answer:")
        print(textwrap.indent(sample.completion, "    "))
    if sample.expected is not None:
        print("  reference:")
        print(textwrap.indent(sample.expected, "    "))
    if not item.revealed:
        print("hidden until you label it: the judge's verdict, score and rationale, and the other reviewers' labels")
        print(f"label it: grader-studio queues label {name} {sample_id} P|F|N [--note TEXT]")
        return
    rows = [["you", item.mine.verdict if item.mine else "", item.mine.note if item.mine else ""]]
    rows += [[o.reviewer, o.verdict, o.note] for o in item.others or []]
    rows += [[f"judge run {j['run_id']} ({j['grader']} v{j['grader_version']})", j["verdict"],
              (j["rationale"] or "").replace("\n", " ")[:100]] for j in judges]
    if item.settled is not None:
        rows.append([f"settled by {item.settled.reviewer}", item.settled.verdict, item.settled.note])
    app.print_table(rows, ["WHO", "VERDICT", "NOTE / RATIONALE"])


def cmd_next(args: argparse.Namespace, app: CliApp) -> int:
    sample_id = app.library.queues.next_for(args.name)
    if sample_id is None:
        queue = app.library.queues.get(args.name)
        if args.json:
            app.print_json({"queue": args.name, "sample_id": None})
        else:
            print(f"nothing left for you in queue {queue.name!r}: every sample has your label or the "
                  f"{queue.labels_wanted} label(s) it wants")
        return 0
    _print_item(app, args.name, sample_id, args.json)
    return 0


def cmd_item(args: argparse.Namespace, app: CliApp) -> int:
    _print_item(app, args.name, args.sample_id, args.json)
    return 0


def cmd_label(args: argparse.Namespace, app: CliApp) -> int:
    app.library.queues.put_label(args.name, args.sample_id, _verdict(args.verdict), args.note or "")
    _print_item(app, args.name, args.sample_id, args.json)
    return 0


def cmd_settle(args: argparse.Namespace, app: CliApp) -> int:
    settled = app.library.queues.settle(args.name, args.sample_id, _verdict(args.verdict), args.note or "")
    if settled is None:
        print(f"{args.sample_id}: settlement withdrawn (the humans' majority counts again)")
    else:
        print(f"{args.sample_id}: settled {settled.verdict} by {settled.reviewer} (v{settled.version}); the "
              "judge's verdict is kept as it was")
    return 0


def _fmt(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "undefined"
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def cmd_agreement(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.queues import queue_agreement

    app.library.queues.require_lead(args.name)
    report = queue_agreement(app.library, args.name, seed=args.seed)
    if args.json:
        app.print_json(report)
        return 0
    humans = report["humans"]
    print(f"queue {args.name!r}: {report['size']} samples, {report['settled']} settled; judges measured on "
          f"{report['measured_on']}")
    print("\nreviewers against each other (PASS/FAIL labels; NA left out)")
    app.print_table([[p["a"], p["b"], p["n"], _fmt(p["kappa"]["value"], p["kappa"]["ci"]),
                      p["kappa"]["reason"] or ""] for p in humans["pairs"]],
                    ["REVIEWER", "REVIEWER", "N", "COHEN κ [95%]", "UNDEFINED BECAUSE"])
    app.print_table([[e["reviewer"], e["n"], _fmt(e["kappa_vs_others"]["value"], e["kappa_vs_others"]["ci"])]
                     for e in humans["each"]], ["REVIEWER", "N", "κ VS OTHERS' MAJORITY [95%]"])
    for name, key in (("Fleiss' κ", "fleiss_kappa"), ("Krippendorff's α", "krippendorff_alpha")):
        stat = humans[key]
        print(f"{name}: {_fmt(stat['value'], stat['ci'])}" + (f" ({stat['reason']})" if stat["value"] is None else ""))
    print("\njudges against the humans (a lead's settlement, else the reviewers' majority; ties left out)")
    app.print_table([[j["run_id"], f"{j['grader']} v{j['grader_version']}", j["n"], _fmt(j["accuracy"]),
                      _fmt(j["cohen_kappa"], j["kappa_ci"]),
                      _fmt((j["per_class"] or {}).get("PASS", {}).get("precision")),
                      _fmt((j["per_class"] or {}).get("PASS", {}).get("recall")),
                      _fmt((j["per_class"] or {}).get("FAIL", {}).get("precision")),
                      _fmt((j["per_class"] or {}).get("FAIL", {}).get("recall")),
                      ", ".join(f"{k} {v}" for k, v in j["excluded"].items())] for j in report["judges"]],
                    ["RUN", "JUDGE", "N", "ACCURACY", "κ [95%]", "PASS PREC", "PASS REC", "FAIL PREC", "FAIL REC",
                     "LEFT OUT"])
    for j in report["judges"]:
        if j["confusion"]:
            c = j["confusion"]
            print(f"run {j['run_id']} confusion (humans × judge): PASS→PASS {c['PASS']['PASS']}, PASS→FAIL "
                  f"{c['PASS']['FAIL']}, FAIL→PASS {c['FAIL']['PASS']}, FAIL→FAIL {c['FAIL']['FAIL']}")
    for change in report["changes"]:
        print(f"run {change['run_b']} against run {change['run_a']}: {change['sentence']}")
    print(f"\n{len(report['disagreements'])} disagreements")
    app.print_table([[d["sample_id"], d["why"], " ".join(f"{w}:{v}" for w, v in d["labels"].items()),
                      d["humans"] or "", " ".join(f"{r}:{v}" for r, v in d["judges"].items()), d["settled"] or ""]
                     for d in report["disagreements"]],
                    ["SAMPLE", "WHY", "LABELS", "HUMANS", "JUDGES (RUN:VERDICT)", "SETTLED"])
    return 0


def cmd_shots(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.queues import shots_from_queue

    app.library.queues.require_lead(args.name)
    entry = shots_from_queue(app.library, args.name, args.judge, _names(args.samples) or None)
    print(f"saved {args.judge} v{entry['version']} with {len(entry['samples'])} few-shot examples from queue "
          f"{args.name!r} ({', '.join(entry['samples'])}); measure it: grader-studio queues rerun {args.name} "
          f"--judge {args.judge}")
    return 0


def cmd_dataset(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.queues import dataset_from_queue

    app.library.queues.require_lead(args.name)
    made = dataset_from_queue(app.library, args.name, args.new_name, _names(args.samples) or None)
    print(f"dataset {args.new_name!r}: {len(made['samples'])} settled samples of {made['provenance']['source_dataset']}"
          f" from queue {args.name!r} (runs {', '.join(map(str, made['provenance']['runs']))}); the lead's verdicts "
          "are its labels 'human'")
    return 0


def cmd_add_run(args: argparse.Namespace, app: CliApp) -> int:
    queue = app.library.queues.add_run(args.name, args.run_id)
    print(f"queue {queue.name!r}: runs {', '.join(map(str, queue.runs))}")
    return 0


def cmd_rerun(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.queues import rerun
    from studio.core.engine.runner import RunOptions

    options = RunOptions(version=args.version, endpoint=args.endpoint)
    run_id = rerun(app.library, args.name, args.judge, options)
    print(f"run {run_id} graded queue {args.name!r} with {args.judge}; compare: grader-studio queues agreement {args.name}")
    return 0


def register(sub: Subparsers) -> None:
    queues = sub.add_parser("queues", help=COMMAND_HELP["queues"])
    qsub = queues.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = qsub.add_parser("create", help="a queue of samples chosen from runs of one dataset by a rule")
    p.add_argument("name")
    p.add_argument("--run", type=int, action="append", required=True, metavar="N",
                   help="a run the samples come from (twice for disagreements between two runs)")
    p.add_argument("--rule", required=True, choices=("random", "disagreements", "low-confidence", "failed"))
    p.add_argument("--n", type=int, help="random: how many samples")
    p.add_argument("--seed", type=int, default=0, help="random: the draw's seed (default 0)")
    p.add_argument("--margin", type=float, default=0.1,
                   help="low-confidence: a score this close to the pass threshold (default 0.1)")
    p.add_argument("--graders", metavar="A,B", help="disagreements between two graders of one suite run")
    p.add_argument("--labels-wanted", type=int, default=1, metavar="K", help="labels wanted per sample (default 1)")
    p.add_argument("--assign", metavar="USER,USER", help="the reviewers (default: everyone)")
    p.add_argument("--lead", metavar="USER,USER", help="who settles samples (default: you)")
    add_json_flag(p)
    p.set_defaults(func=cmd_create, refusal_code=2)
    p = qsub.add_parser("list", help="the library's review queues with their progress")
    add_json_flag(p)
    p.set_defaults(func=cmd_list, refusal_code=2)
    p = qsub.add_parser("show", help="a queue: its rule, reviewers, progress per reviewer and samples")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=cmd_show, refusal_code=2)
    p = qsub.add_parser("assign", help="add reviewers (or leads) to a queue")
    p.add_argument("name")
    p.add_argument("users", nargs="+")
    p.add_argument("--lead", action="store_true", help="as leads (who settle samples)")
    p.add_argument("--remove", action="store_true", help="take them off instead")
    p.set_defaults(func=cmd_assign, refusal_code=2)
    p = qsub.add_parser("export", help="every sample's labels, settlement and judge verdicts as JSONL (a lead's)")
    p.add_argument("name")
    p.add_argument("-o", "--output", help="file (default: standard output)")
    p.set_defaults(func=cmd_export, refusal_code=2)
    p = qsub.add_parser("next", help="your next sample to label, blind (the judge and others hidden)")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=cmd_next, refusal_code=2)
    p = qsub.add_parser("item", help="one sample of a queue as you may see it")
    p.add_argument("name")
    p.add_argument("sample_id")
    add_json_flag(p)
    p.set_defaults(func=cmd_item, refusal_code=2)
    for action, helptext, func in (
            ("label", "your label of a sample (P, F, N or clear); then the judge and the others show", cmd_label),
            ("settle", "a lead settles a sample (P, F, N or clear); the judge's verdict is kept", cmd_settle)):
        p = qsub.add_parser(action, help=helptext)
        p.add_argument("name")
        p.add_argument("sample_id")
        p.add_argument("verdict")
        p.add_argument("--note", help="why (becomes the reasoning of a few-shot example)")
        if action == "label":
            add_json_flag(p)
        p.set_defaults(func=func, refusal_code=2)
    p = qsub.add_parser("agreement", help="reviewers against each other and each judge against the humans")
    p.add_argument("name")
    p.add_argument("--seed", type=int, default=20261123, help="the bootstrap intervals' seed")
    add_json_flag(p)
    p.set_defaults(func=cmd_agreement, refusal_code=2)
    p = qsub.add_parser("shots", help="a new judge version with settled samples as few-shot examples")
    p.add_argument("name")
    p.add_argument("--judge", required=True)
    p.add_argument("--samples", metavar="ID,ID", help="which settled samples (default: those a run judged otherwise)")
    p.set_defaults(func=cmd_shots, refusal_code=2)
    p = qsub.add_parser("dataset", help="a curated dataset of settled samples, with provenance")
    p.add_argument("name")
    p.add_argument("new_name")
    p.add_argument("--samples", metavar="ID,ID", help="which settled samples (default: all)")
    p.set_defaults(func=cmd_dataset, refusal_code=2)
    p = qsub.add_parser("add-run", help="add a run of the queue's dataset (shown beside the others in agreement)")
    p.add_argument("name")
    p.add_argument("run_id", type=int)
    p.set_defaults(func=cmd_add_run, refusal_code=2)
    p = qsub.add_parser("rerun", help="grade the queue's samples with a judge (version) and add the run")
    p.add_argument("name")
    p.add_argument("--judge", required=True)
    p.add_argument("--version", type=int)
    p.add_argument("--endpoint")
    p.set_defaults(func=cmd_rerun, refusal_code=2)



class AdjudicatedFaces:
    """``runs show --adjudicated``: the JSON summary gains ``adjudicated`` (both pass rates, each
    with its basis) and ``figures_basis``; the terminal's summary is headed "as judged" and followed
    by both pass rates, each saying which it is. The stored results are never changed."""

    def __init__(self, app: CliApp, run_id: int, summary: SummaryJson, print_summary: SummaryPrinter) -> None:
        from studio.core.engine.queues import adjudicated

        self.report = adjudicated(app.library, run_id)
        self._summary, self._print_summary = summary, print_summary

    def json_summary(self, info: RunInfo, library: Library | None = None,
                     run: RunSections | None = None) -> JsonObject:
        return {**self._summary(info, library, run), "figures_basis": "as judged", "adjudicated": self.report}

    def terminal_summary(self, info: RunInfo, library: Library | None = None, run: RunSections | None = None) -> None:
        print("figures below as judged (the judge's verdicts as stored):")
        self._print_summary(info, library, run)
        self.say_both()

    def say_both(self, then: str = "") -> None:
        from studio.core.engine.queues import adjudicated_lines

        for line in adjudicated_lines(self.report):
            print(line)
        if then:
            print(then)
            print()
