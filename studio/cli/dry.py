"""``grader-studio run GRADER|SUITE DATASET --dry-run``: the calls, tokens and cost a run would have,
per grader (a suite's or ``--graders``' each).

The counting is the engine's (engine/dry_run.py); this prints it. Nothing is graded or stored: no
run is made, the judge cache is read, not written.
"""

from __future__ import annotations

import argparse

from studio.core.engine.dry_run import dry_run

from .app import CliApp, CliError
from .ci import request_of


def run_dry(args: argparse.Namespace, app: CliApp) -> int:
    graders = None if args.graders is None else args.graders.split(",")
    grader, dataset = (None, args.grader) if graders is not None and args.dataset is None else (args.grader, args.dataset)
    if args.resume is not None or not ((grader or graders) and dataset) or (graders and grader):
        raise CliError("--dry-run takes GRADER (or a suite) and DATASET, or --graders A,B DATASET (not --resume)",
                       code=2)
    options = request_of(args).options()  # the run request the run itself would make
    estimates = dry_run(app.library, grader, dataset, options, repeats=args.repeat or 1, graders=graders)
    if args.json:
        app.print_json({"dry_run": True, "graders": [e.to_json() for e in estimates]})
        return 0
    for estimate in estimates:
        for line in estimate.lines():
            print(line)
    return 0
