"""``grader-studio run GRADER DATASET --dry-run``: the calls, tokens and cost a run would have.

The counting is the engine's (engine/dry_run.py); this prints it. Nothing is graded or stored: no
run is made, the judge cache is read, not written.
"""

from __future__ import annotations

import argparse

from studio.core.engine.dry_run import dry_run
from studio.core.engine.runner import RunOptions
from studio.core.judges.http.errors import JudgeError
from studio.core.store import LibraryError

from .app import CliApp, CliError


def run_dry(args: argparse.Namespace, app: CliApp) -> int:
    if args.resume is not None or not (args.grader and args.dataset):
        raise CliError("--dry-run takes GRADER and DATASET (not --resume)", code=2)
    options = RunOptions(version=args.version, limit=args.limit, concurrency=args.concurrency,
                         endpoint=args.endpoint, use_cache=not args.no_cache)
    try:
        estimates = dry_run(app.library, args.grader, args.dataset, options, repeats=args.repeat or 1)
    except (LibraryError, JudgeError) as exc:
        raise CliError(str(exc), code=2) from exc
    if args.json:
        app.print_json({"dry_run": True, "graders": [e.to_json() for e in estimates]})
        return 0
    for estimate in estimates:
        for line in estimate.lines():
            print(line)
    return 0
