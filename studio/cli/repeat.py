"""``grader-studio run GRADER DATASET --repeat N``: N runs, each sample's spread, self-agreement."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from studio.core.engine.consistency import consistency, repeat_run
from studio.core.engine.sections import load_run
from studio.core.engine.verdict import judge, verdict_line
from studio.core.json_types import JsonObject

from .app import CliApp, CliError

if TYPE_CHECKING:
    from studio.core.engine.request import RunRequest


def _print(report: JsonObject) -> None:
    undefined = report["undefined"]
    print(f"{report['repeats']} repetitions (runs {', '.join(map(str, report['runs']))}) of {report['n']} samples")
    kappa = report["fleiss_kappa"]
    alpha = report["krippendorff_alpha"]
    print("  Fleiss' κ (verdicts): " + (f"{kappa:.3f} ({report['fleiss_reading']})" if kappa is not None
                                        else f"undefined: {undefined['fleiss_kappa']}"))
    print("  Krippendorff's α (scores, interval): " + (f"{alpha:.3f}" if alpha is not None
                                                       else f"undefined: {undefined['krippendorff_alpha']}"))
    print(f"  unstable samples {report['unstable']}" + "".join(
        f"  excluded {k} {v}" for k, v in report["excluded"].items()))
    for sample in [s for s in report["samples"] if s["unstable"]][:20]:
        print(f"    {sample['sample_id']}: verdicts {sample['verdicts']} spread {sample['spread']}")


def repeat_asked(args: argparse.Namespace, asked: RunRequest) -> None:
    """What ``--repeat N`` refuses (exit 2) before anything is read: a resume, the window's stream,
    N under 2, report files and caps (each run is its own; ``runs report RUN_ID`` writes them)."""
    if asked.resume is not None or args.progress_jsonl:
        raise CliError("--repeat takes GRADER and DATASET (no --resume, no --progress-jsonl)", code=2)
    if not (asked.grader and asked.dataset):
        raise CliError("run --repeat needs GRADER and DATASET", code=2)
    if args.repeat < 2:
        raise CliError("--repeat needs N >= 2 (one run cannot disagree with itself)", code=2)
    reports = asked.reports
    if (reports.junit or reports.markdown or reports.github or reports.baseline is not None
            or asked.max_cost is not None or asked.max_tokens):
        raise CliError("--repeat makes several runs: write their reports with `runs report RUN_ID`", code=2)


def run_repeated(args: argparse.Namespace, app: CliApp, asked: RunRequest) -> int:
    """N runs of the request ``repeat_asked`` let through (the sandbox's opt-in and notice given,
    as for any run that grades: cli/runs.py ``cmd_run``), their spread and self-agreement printed.
    ``args`` only says how many times (``--repeat``) and how to print; the run is ``asked``."""
    # the one request every run is (engine/request.py): its thresholds read and checked once, as a
    # single run's are; each repetition bypasses the cache (a cached answer cannot disagree)
    request = asked.model_copy(update={"use_cache": False})
    thresholds = request.check(app.library).thresholds
    options = request.options()
    infos = repeat_run(app.library, str(asked.grader), str(asked.dataset), options, args.repeat)
    report = consistency(app.library, [i.id for i in infos])
    from .run_report import summary

    verdicts = [judge(load_run(app.library, i.id), thresholds) for i in infos]
    code = max(v.exit_code for v in verdicts)
    if args.json:
        app.print_json({"runs": [{**summary(i), "verdict": v.model_dump(mode="json")}
                                 for i, v in zip(infos, verdicts, strict=True)],
                        "consistency": report})
    else:
        _print(report)
        for verdict in verdicts:
            line = verdict_line(verdict)
            if line is not None:
                print(line, file=sys.stderr)
    return code
