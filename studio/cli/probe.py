"""``grader-studio probe JUDGE DATASET``: measure a judge's biases (see ``studio.core.engine.probes``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from studio.core.engine.probes import PROBES, probe_judge
from studio.core.json_types import JsonObject

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .parsers import Subparsers


def _fmt(value: float | None, ci: Sequence[float] | None = None, percent: bool = False) -> str:
    if value is None:
        return "n/a"
    text = f"{value:.1%}" if percent else f"{value:+.3f}"
    if ci:
        low, high = ci
        text += f" [{low:.1%}, {high:.1%}]" if percent else f" [{low:+.3f}, {high:+.3f}]"
    return text


def print_report(report: JsonObject) -> None:
    print(f"{report['grader']} v{report['grader_version']} on {report['dataset']} "
          f"({report['samples']} samples)")
    for name, probe in report["probes"].items():
        flag = {True: "FLAGGED", False: "ok", None: "no verdict"}[probe.get("flag")]
        if name == "position":
            line = (f"position consistency {_fmt(probe['position_consistency'], probe['position_consistency_ci'], True)}"
                    f", first-position rate {_fmt(probe['first_position_rate'], probe['first_position_rate_ci'], True)}")
        elif name == "repeat":
            kappa = "n/a" if probe.get("kappa") is None else f"{probe['kappa']:.3f}"
            sd = "n/a" if probe.get("sd") is None else f"{probe['sd']:.3f}"
            line = f"kappa {kappa}, score sd {sd}, verdict flips {_fmt(probe.get('flip_rate'), None, True)}"
        else:
            line = (f"mean shift {_fmt(probe.get('mean_shift'), probe.get('ci'))}, "
                    f"verdict flips {_fmt(probe.get('flip_rate'), None, True)}")
        reason = f" ({probe['reason']})" if probe.get("reason") else ""
        print(f"  {name:<10} n={probe['n']:<5} {line}  {flag}{reason}")
        if probe.get("rule"):
            print(f"  {'':<10} {probe['rule']}")
    for stage, count in (report.get("errors") or {}).items():
        print(f"  {count} sample(s) errored ({stage}) and were left out there")


def cmd_probe(args: argparse.Namespace, app: CliApp) -> int:
    names = [p.strip() for p in args.probe.split(",") if p.strip()] if args.probe else None
    if args.limit is not None and args.limit < 1:
        raise CliError("--limit must be at least 1", code=2)

    def progress(stage: str, done: int, total: int) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r{stage}: {done}/{total}   ")
            sys.stderr.flush()

    report = probe_judge(app.library, args.judge, args.dataset, names, limit=args.limit,
                         endpoint=args.endpoint, repeats=args.repeats, on_progress=progress)
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    if args.json:
        app.print_json(report)
    else:
        print_report(report)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "probe", help=COMMAND_HELP["probe"],
        description="Runs the judge on the samples and on perturbed copies and reports, per probe, "
        "the mean score shift with a paired 95% interval, the share of verdicts that flip, and a "
        "flag when the judge is biased. The report is kept for the judge's report card.",
    )
    p.add_argument("judge", help="judge key")
    p.add_argument("dataset", help="dataset name")
    p.add_argument("--probe", metavar="NAMES",
                   help=f"comma-separated, from {','.join(PROBES)} (default: every one that applies)")
    p.add_argument("--limit", type=int, metavar="N", help="probe only the first N samples")
    p.add_argument("--endpoint", metavar="NAME", help="endpoint for this probe (overrides the judge's)")
    p.add_argument("--repeats", type=int, default=3, metavar="N", help="calls per sample for the repeat probe")
    add_json_flag(p)
    p.set_defaults(func=cmd_probe)
