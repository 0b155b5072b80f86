"""``grader-studio run GRADER|SUITE DATASET --dry-run``: the calls, tokens and cost a run would have,
per grader (a suite's or ``--graders``' each).

The counting is the engine's (engine/dry_run.py); this prints it. Nothing is graded or stored: no
run is made, the judge cache is read, not written.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from studio.core.engine.dry_run import dry_run

from .app import CliApp, CliError

if TYPE_CHECKING:
    from studio.core.engine.request import RunRequest


def run_dry(args: argparse.Namespace, app: CliApp, request: RunRequest) -> int:
    """``args`` only says how many repeats and how to print; what would run is ``request``."""
    grader, graders, dataset = request.grader, request.graders, request.dataset
    if request.resume is not None or not ((grader or graders) and dataset) or (graders and grader):
        raise CliError("--dry-run takes GRADER (or a suite) and DATASET, or --graders A,B DATASET (not --resume)",
                       code=2)
    options = request.options()  # the run's own options: what the run itself would make
    estimates = dry_run(app.library, grader, str(dataset), options, repeats=args.repeat or 1, graders=graders)
    if args.json:
        app.print_json({"dry_run": True, "graders": [e.to_json() for e in estimates]})
        return 0
    for estimate in estimates:
        for line in estimate.lines():
            print(line)
    return 0
