"""The CI face of ``run`` and ``runs report``: check the report options before a run exists, then
write the reports and say the verdict. The reports, verdict, usage and budget are the engine's
(engine/reports, verdict.py, usage.py, budget.py); this module only picks files and prints.

Exit status: 0 pass, 1 a threshold missed, 2 the run could not be done (bad input included).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from studio.core.engine.budget import BudgetError, Caps, parse_money
from studio.core.engine.reports import ReportPathError, check_report_path
from studio.core.engine.sections import RunSections, load_run
from studio.core.engine.usage import Usage, run_usage
from studio.core.engine.verdict import (
    ThresholdError,
    Thresholds,
    Verdict,
    check_keys,
    judge,
    parse_thresholds,
    verdict_line,
)
from studio.core.safe_files import write_text
from studio.core.store import LibraryError

from .app import CliApp, CliError

NOT_DONE = 2


@dataclass
class CiOptions:
    """The report options of one command, checked: everything here was valid before the run began."""

    thresholds: Thresholds
    junit: Path | None = None
    markdown: Path | None = None
    baseline: RunSections | None = None
    github: bool = False


def refuse(message: str) -> CliError:
    return CliError(message, code=NOT_DONE)


def check_ci_options(args: argparse.Namespace, app: CliApp, grader_keys: list[str], dataset: str) -> CiOptions:
    """Every report option of ``args`` checked, or one sentence and exit 2 (no run is made)."""
    try:
        thresholds = parse_thresholds(getattr(args, "fail_under", None))
        check_keys(thresholds, grader_keys)
        junit = check_report_path(args.junit, "--junit") if getattr(args, "junit", None) else None
        markdown = check_report_path(args.markdown, "--markdown") if getattr(args, "markdown", None) else None
    except (ThresholdError, ReportPathError) as exc:
        raise refuse(str(exc)) from None
    baseline = None
    if getattr(args, "baseline", None) is not None:
        from studio.core.engine.reports.markdown import check_baseline

        try:
            baseline = load_run(app.library, args.baseline)
            check_baseline(dataset, baseline)
        except LibraryError as exc:
            raise refuse(f"--baseline: {exc}") from None
    return CiOptions(thresholds=thresholds, junit=junit, markdown=markdown, baseline=baseline,
                     github=bool(getattr(args, "github", False)))


def parse_caps(args: argparse.Namespace) -> Caps:
    """``--max-cost`` / ``--max-tokens`` as exact caps, or one sentence and exit 2."""
    try:
        cost: Decimal | None = None if args.max_cost is None else parse_money(args.max_cost, "--max-cost")
    except BudgetError as exc:
        raise refuse(str(exc)) from None
    if args.max_tokens is not None and args.max_tokens < 0:
        raise refuse(f"--max-tokens must be zero or more, not {args.max_tokens}")
    return Caps(max_cost=cost, max_tokens=args.max_tokens)


@dataclass
class Finished:
    run: RunSections
    verdict: Verdict
    usage: Usage


def conclude(app: CliApp, run_id: int, options: CiOptions, github_stream: TextIO | None = None) -> Finished:
    """The verdict and usage of a finished run, and its report files written; ``--github``'s
    workflow commands go to ``github_stream`` (stderr when stdout carries JSON)."""
    run = load_run(app.library, run_id)
    verdict = judge(run, options.thresholds)
    usage = run_usage(app.library, run)
    try:
        if options.junit is not None:
            from studio.core.engine.reports.junit import junit_xml

            write_text(options.junit, junit_xml(app.library, run))
        if options.markdown is not None:
            from studio.core.engine.reports.markdown import append_step_summary, markdown_report

            text = markdown_report(app.library, run, verdict, baseline=options.baseline, usage=usage)
            write_text(options.markdown, text)
            append_step_summary(text)  # GitHub Actions shows it on the run's page
    except OSError as exc:
        raise refuse(f"the report could not be written: {exc.strerror or exc} ({exc.filename})") from None
    if options.github:
        from studio.core.engine.reports.github import workflow_commands

        from .output import workflow_command

        for line in workflow_commands(app.library, run, verdict):
            workflow_command(line, github_stream)
    return Finished(run=run, verdict=verdict, usage=usage)


def json_fields(done: Finished) -> dict[str, Any]:
    return {"verdict": done.verdict.model_dump(mode="json"), "usage": done.usage.to_json()}


def print_outcome(done: Finished, usage_lines: bool = True) -> None:
    """The usage lines on stdout (unless stdout is JSON) and the verdict's one sentence on stderr."""
    for line in done.usage.lines() if usage_lines else []:
        print(line)
    line = verdict_line(done.verdict)
    if line is not None:
        print(line, file=sys.stderr)
