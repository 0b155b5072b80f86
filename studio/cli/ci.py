"""The CI face of ``run`` and ``runs report``: the report options parsed into the run request, and
the verdict printed. Checking them before a run exists, writing the reports and judging the run are
the engine's (engine/request.py); this module only parses and prints.

Exit status: 0 pass, 1 a threshold missed, 2 the run could not be done (bad input included).
"""

from __future__ import annotations

import argparse
import sys

from studio.core.engine.request import Finished, Reports, RunRequest
from studio.core.engine.verdict import verdict_line
from studio.core.json_types import JsonObject


def reports_of(args: argparse.Namespace) -> Reports:
    """``--junit``, ``--markdown``, ``--github`` and ``--baseline`` as the request's reports."""
    return Reports(junit=getattr(args, "junit", None) or None, markdown=getattr(args, "markdown", None) or None,
                   github=bool(getattr(args, "github", False)), baseline=getattr(args, "baseline", None))


def request_of(args: argparse.Namespace) -> RunRequest:
    """``run``'s arguments as the engine's run request, made once (parsing only: the engine checks
    it); ``--generate-with``, ``--repeat`` and ``--dry-run`` take this request, never the arguments."""
    graders = None if args.graders is None else args.graders.split(",")
    grader, dataset = args.grader, args.dataset
    if graders is not None and dataset is None:  # run --graders a,b,c DATASET: the one positional
        grader, dataset = None, grader
    reports = reports_of(args)
    overall = overall_of(args.overall)
    return RunRequest.asked(grader=grader, graders=graders, dataset=dataset, resume=args.resume,
                             retry_errors=bool(getattr(args, "retry_errors", False)), version=args.version,
                             limit=args.limit, concurrency=args.concurrency, endpoint=args.endpoint,
                             use_cache=not args.no_cache, pass_threshold=args.pass_threshold, keep_going=args.keep_going,
                             executor=args.executor, ray_address=args.ray_address, max_cost=args.max_cost,
                             max_tokens=args.max_tokens, fail_under=list(args.fail_under or []),
                             reports=reports, **overall)


def overall_of(rule: str | None) -> dict[str, str | None]:
    """``--overall mean|all-pass|GRADER``: the rule, or a composite grader's key."""
    if rule is None:
        return {}
    if rule in ("mean", "all-pass", "none"):
        return {"overall": rule}
    return {"overall": "composite", "overall_grader": rule}


def json_fields(done: Finished) -> JsonObject:
    return {"verdict": done.verdict.model_dump(mode="json"), "usage": done.usage.to_json()}


def print_outcome(done: Finished, usage_lines: bool = True) -> None:
    """The usage lines on stdout (unless stdout is JSON) and the verdict's one sentence on stderr."""
    for line in done.usage.lines() if usage_lines else []:
        print(line)
    sentence = verdict_line(done.verdict)
    if sentence is not None:
        print(sentence, file=sys.stderr)
