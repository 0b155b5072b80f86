"""``grader-studio agreement|compare|align``: does a judge agree with humans, did an edit help.

The numbers come from ``studio.core.engine.agreement`` (the window's views show the same); the
text output is a summary, ``--json`` is the whole report.
"""

from __future__ import annotations

import argparse
import threading

from studio.core.json_types import JsonObject
from studio.core.models.labels import DEFAULT_KEY

from .app import COMMAND_HELP, CliApp, add_json_flag
from .broken import say_broken
from .parsers import Subparsers


def _num(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def _ci(ci: list[float] | None) -> str:
    return "" if not ci else f" [95% CI {ci[0]:.3f}, {ci[1]:.3f}]"


def print_agreement(report: JsonObject) -> None:
    undefined = report["undefined"]
    print(f"run {report['run_id']}: {report['grader']} v{report['grader_version']} on {report['dataset']} "
          f"against labels {report['labels']!r}")
    print(f"  n {report['n']}  excluded " + (", ".join(f"{k} {v}" for k, v in sorted(report["excluded"].items()))
                                             or "none"))
    if report["n_binary"]:
        kappa = report["cohen_kappa"]
        reading = f" ({report['kappa_reading']})" if kappa is not None else f" ({undefined.get('cohen_kappa')})"
        print(f"  accuracy {_num(report['accuracy'])}  Cohen's κ {_num(kappa)}{reading}{_ci(report['kappa_ci'])}")
        print(f"  base rate (human PASS) {_num(report['base_rate'])}")
        c = report["confusion"]
        print("  confusion (rows human, columns judge):   PASS  FAIL")
        for h in ("PASS", "FAIL"):
            print(f"    {h:<4} {c[h]['PASS']:>37} {c[h]['FAIL']:>5}")
        for warning in report["warnings"]:
            print(f"  warning: {warning}")
        if report["best_threshold"] is not None:
            print(f"  threshold with the highest κ: {report['best_threshold']:g} (run used {report['pass_threshold']:g})")
    if report["n_scores"]:
        for name in ("spearman", "kendall", "pearson", "mae", "quadratic_kappa"):
            value = report.get(name)
            why = "" if value is not None else f" ({undefined.get(name, '')})"
            print(f"  {name} {_num(value)}{_ci(report.get(name + '_ci'))}{why}")
        print(f"  scale: {report['scale_mapping']}")
    if report["n"] == 0:
        print(f"  nothing to compare: {undefined.get('n')}")
    if report["disagreements"]:
        print(f"  {len(report['disagreements'])} disagreements, worst first:")
        for d in report["disagreements"][:20]:
            print(f"    {d['sample_id']}: human {d['human']}, judge {d['judge']} "
                  f"({_num(d['judge_score'], 2)}): {(d['rationale'] or '').replace(chr(10), ' ')[:70]}")


def cmd_agreement(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.agreement import agreement, suite_agreement
    from studio.core.engine.jury import juror_agreement

    # labels that do not validate are left out of every report: each is named, with how to repair it
    say_broken(app.library.labels.broken(app.library.runs.get(args.run_id).dataset, args.labels))
    if args.grader is None and app.library.runs.get(args.run_id).suite:
        reports = suite_agreement(app.library, args.run_id, args.labels, seed=args.seed)
        if args.json:
            app.print_json({"run_id": args.run_id, "graders": reports})
        else:
            for report in reports.values():
                print_agreement(report)
        return 0
    report = agreement(app.library, args.run_id, args.labels, seed=args.seed, grader=args.grader)
    jurors = juror_agreement(app.library, args.run_id, args.labels)
    if jurors:  # a jury: each juror against the same labels, and its tokens
        report["jurors"] = jurors
    if args.json:
        app.print_json(report)
    else:
        print_agreement(report)
        for name, juror in jurors.items():
            print(f"  juror {name}: n {juror['n']}  accuracy {_num(juror.get('accuracy'))}"
                  f"  Cohen's κ {_num(juror.get('cohen_kappa'))}{_ci(juror.get('cohen_kappa_ci'))}"
                  f"  tokens {juror['prompt_tokens']}+{juror['completion_tokens']}")
    return 0


def cmd_compare(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.agreement import compare, suite_compare

    from .share_html import compare_html

    runs = app.library.runs
    if args.grader is None and (runs.get(args.run_a).suite or runs.get(args.run_b).suite):
        reports = suite_compare(app.library, args.run_a, args.run_b, args.labels, seed=args.seed)
        if getattr(args, "html", False):  # runs compare --html (cli/share_html.py)
            return compare_html(args, app, reports)
        if args.json:
            app.print_json(reports)
            return 0
        for key, report in reports["graders"].items():
            print(f"grader {key}:")
            print_compare(report)
        for side in ("only_a", "only_b"):
            if reports[side]:
                print(f"graded by run {args.run_a if side == 'only_a' else args.run_b} only: {', '.join(reports[side])}")
        return 0
    report = compare(app.library, args.run_a, args.run_b, args.labels, seed=args.seed, grader=args.grader)
    if getattr(args, "html", False):
        return compare_html(args, app, report)
    if args.json:
        app.print_json(report)
        return 0
    print_compare(report)
    return 0


def print_compare(report: JsonObject) -> None:
    a, b = report["run_a"], report["run_b"]
    if a.get("dataset", report["dataset"]) != b.get("dataset", report["dataset"]):  # two models' outputs
        def side(run: JsonObject) -> str:
            made = run.get("generated_by")
            by = f", by {made['endpoint']} ({made['model']})" if made else ""
            return f"run {run['id']} ({run['grader']} v{run['grader_version']} on {run['dataset']}{by})"

        print(f"A = {side(a)}  B = {side(b)}")
    else:
        print(f"A = run {a['id']} ({a['grader']} v{a['grader_version']})  B = run {b['id']} "
              f"({b['grader']} v{b['grader_version']})  on {report['dataset']}")
    print(f"  n_common {report['n_common']}  mean A {_num(report['mean_a'])}  mean B {_num(report['mean_b'])}  "
          f"delta {_num(report['mean_delta'])}{_ci(report['mean_delta_ci'])}")
    print(f"  B better {report['wins']}, worse {report['losses']}, tied {report['ties']}")
    print(f"  pass/fail flips {len(report['flips'])} (A pass, B fail {report['pass_a_fail_b']}; "
          f"A fail, B pass {report['fail_a_pass_b']})  McNemar exact p {_num(report['mcnemar_p'], 4)}")
    if report["labels"]:
        print(f"  labels {report['labels']['key']!r}: {report['labels']['sentence']}")
    for flip in report["flips"][:20]:
        print(f"    {flip['sample_id']}: A {flip['a']['verdict']} / B {flip['b']['verdict']}")


def cmd_align(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.align import AlignOptions, align

    options = AlignOptions(labels=args.labels, holdout=args.holdout, seed=args.seed, max_shots=args.max_shots,
                           endpoint=args.endpoint, concurrency=args.concurrency, version=args.version)
    report = align(app.library, args.judge, args.dataset, options, cancel=threading.Event())
    if args.json:
        app.print_json(report)
        return 0
    print(f"align {report['judge']} on {report['dataset']} (labels {report['labels']!r}, seed {report['seed']}): "
          f"{report['n_train']} training, {report['n_holdout']} held-out samples")
    print(f"  training disagreements {report['train_disagreements']}, few-shot examples added {report['shots_added']}")
    if report["new_version"] is None:
        print(f"  {report.get('note', 'no new version')}")
        return 0
    stat = report["statistic"]
    before, after = report["before"], report["after"]
    ci_key = "kappa_ci" if stat == "cohen_kappa" else "spearman_ci"
    print(f"  v{report['old_version']} -> v{report['new_version']}, measured on the {report['n_holdout']} "
          f"held-out samples only:")
    print(f"    before: {stat} {_num(before[stat])}{_ci(before[ci_key])}  (n {before['n']})")
    print(f"    after:  {stat} {_num(after[stat])}{_ci(after[ci_key])}  (n {after['n']})")
    if "sentence" in report["change"]:
        print(f"    {report['change']['sentence']}")
    return 0


def add_compare_parser(sub: Subparsers, name: str) -> argparse.ArgumentParser:
    """``compare`` (and ``runs compare``): run B against run A, per grader for suite runs."""
    p = sub.add_parser(name, help=COMMAND_HELP[name])
    p.add_argument("run_a", type=int)
    p.add_argument("run_b", type=int)
    p.add_argument("--labels", default=DEFAULT_KEY, help="label set for the side-by-side agreement")
    p.add_argument("--seed", type=int, default=20261123, help="bootstrap seed")
    p.add_argument("--grader", help="one grader of suite runs (default: each grader both runs have)")
    add_json_flag(p)
    p.set_defaults(func=cmd_compare)
    return p


def register(sub: Subparsers) -> None:
    p = sub.add_parser("agreement", help=COMMAND_HELP["agreement"])
    p.add_argument("run_id", type=int)
    p.add_argument("--labels", default=DEFAULT_KEY, help=f"label set key (default {DEFAULT_KEY})")
    p.add_argument("--seed", type=int, default=20261123, help="bootstrap seed")
    p.add_argument("--grader", help="one grader of a suite run (default: each grader)")
    add_json_flag(p)
    p.set_defaults(func=cmd_agreement)
    add_compare_parser(sub, "compare")
    p = sub.add_parser("align", help=COMMAND_HELP["align"])
    p.add_argument("judge", help="judge key")
    p.add_argument("--dataset", required=True)
    p.add_argument("--labels", default=DEFAULT_KEY)
    p.add_argument("--holdout", type=float, default=0.3, help="share of labelled samples held out (default 0.3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-shots", type=int, default=8)
    p.add_argument("--version", type=int, help="version to start from (default: current)")
    p.add_argument("--endpoint", help="judge endpoint for the runs")
    p.add_argument("--concurrency", type=int)
    add_json_flag(p)
    p.set_defaults(func=cmd_align)


