"""``grader-studio import EVAL.json [--items ITEMS.jsonl]``: an OpenAI eval becomes a suite and a dataset.

``import`` creates the graders (one per testing criterion, ``platforms/openai_evals.py``); for an
OpenAI file this module then adds what makes the eval runnable as it was: a suite named after the
eval holding those graders (each criterion's pass threshold as the member's threshold, 1.0 for the
pass/fail types), and, with ``--items``, a dataset of the items (every field kept, the stored
output read as ``sample.output_text``/``output_json``). ``grader-studio run SUITE DATASET`` runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject

from .parsers import Subparsers

if TYPE_CHECKING:  # the commands import these when they run: ``runs`` registers this module's parser
    from studio.core.engine.sections import RunSections
    from studio.core.models import GraderDefinition
    from studio.core.platforms import ExportResult

    from .app import CliApp

def say(args: argparse.Namespace, line: str) -> None:
    """A line of the plain report (``--json`` prints one JSON document instead)."""
    if not args.json:
        print(line)


def finish(args: argparse.Namespace, app: CliApp, path: Path, graders: list[GraderDefinition],
           refused: dict[str, str]) -> JsonObject:
    """Create the suite (and the dataset with ``--items``) once the graders are in
    (``openai_evals.make_runnable``, as the window's import does); returns what was made for
    ``--json``, adding what was refused to ``refused``."""
    from studio.core.platforms import openai_evals

    read = openai_evals.load(path)
    done: JsonObject = {"eval": read.name, "shape": read.shape, "not_carried": read.not_carried}
    items = getattr(args, "items", None)
    samples = openai_evals.read_items(Path(items)) if items else None
    if args.dry_run or refused:
        return done
    made, failed = openai_evals.make_runnable(app.library, read, graders, samples, path.name,
                                              Path(items).name if items else "")
    done.update(made)
    refused.update(failed)
    if "suite" in made:
        say(args, f"suite {made['suite']} ({len(graders)} graders) for eval {read.name!r}")
    if "dataset" in made:
        say(args, f"dataset {made['dataset']} ({len(samples or [])} items)")
    if "suite" in made:
        print(f"run it: grader-studio run {made['suite']} {made.get('dataset', 'DATASET')}", file=sys.stderr)
    return done


# ---- runs report's criteria table and runs compare-external ----------------------------------------


def criteria_table(run: RunSections) -> list[str]:
    """Per criterion (each grader of a suite run): passed / failed / errored and the pass rate, the
    way OpenAI's eval dashboard showed a run; the counts are the run's summary's decisions."""
    if not run.suite:
        return []
    rows = [("criterion", "passed", "failed", "errored", "pass rate")]
    for found in run.summaries:
        d = found.decisions
        decided = d.get("pass", 0) + d.get("fail", 0)
        rate = f"{d.get('pass', 0) / decided:.1%}" if decided else "undefined"
        rows.append((found.key, str(d.get("pass", 0)), str(d.get("fail", 0)), str(d.get("error", 0)), rate))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
            for r in rows]


def cmd_compare_external(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.platforms.openai_results import compare_external

    found = compare_external(app.library, args.run_id, Path(args.file))
    if args.json:
        app.print_json(found.to_json())
        return 0
    print(f"run {args.run_id} beside {Path(args.file).name} (OpenAI's output items)")
    header = ("criterion", "studio pass/fail/err", "openai pass/fail/err", "agree", "max score gap")
    rows = [header]
    for c in found.criteria.values():
        gap = "-" if c.max_score_gap is None else f"{c.max_score_gap:.4g}"
        rows.append((c.key, "/".join(str(c.ours[k]) for k in ("pass", "fail", "error")),
                     "/".join(str(c.theirs[k]) for k in ("pass", "fail", "error")), f"{c.agree}/{c.both}", gap))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)))
    for line in found.samples:
        differing = {k: v for k, v in line["criteria"].items()
                     if args.all or v["studio"]["passed"] != v["openai"]["passed"]}
        for key, both in differing.items():
            ours, theirs = both["studio"], both["openai"]
            print(f"  sample {line['sample']} {key}: studio {_side(ours)}  openai {_side(theirs)}")
    if found.unmatched_items:
        print(f"warning: {len(found.unmatched_items)} output item(s) match no sample of the run's dataset "
              f"(items {', '.join(map(str, found.unmatched_items[:10]))})", file=sys.stderr)
    if found.unknown_criteria:
        print(f"warning: criteria not in the run: {', '.join(found.unknown_criteria)}", file=sys.stderr)
    return 0


def _side(side: JsonObject) -> str:
    verdict = {True: "pass", False: "fail", None: side.get("status") or "error"}[side["passed"]]
    score = side.get("score")
    return f"{verdict} ({'-' if score is None else f'{score:.4g}'})"


def register_runs(rsub: Subparsers) -> None:
    from .app import add_json_flag

    p = rsub.add_parser("compare-external",
                        help="a run beside OpenAI's output items for the same eval: per criterion and per sample")
    p.add_argument("run_id", type=int)
    p.add_argument("file", help="OpenAI's output items (JSONL, or the API's list page as JSON)")
    p.add_argument("--all", action="store_true", help="list every sample, not only those the two sides disagree on")
    add_json_flag(p)
    p.set_defaults(func=cmd_compare_external)


def exported_eval(app: CliApp, keys: list[str], named: list[tuple[str, GraderDefinition]]) -> ExportResult | None:
    """``export SUITE --to openai`` of a suite imported from an OpenAI eval: the eval file again (its
    envelope as it was, each grader's criterion in its place); None for any other export."""
    from studio.core.platforms import ExportResult, get_platform, openai_evals
    from studio.core.platforms.openai import OpenAIPlatform

    if len(keys) != 1 or not app.library.suites.exists(keys[0]):
        return None
    suite = app.library.suites.get(keys[0]).definition
    if suite.origin is None:
        return None
    platform = get_platform("openai")
    assert isinstance(platform, OpenAIPlatform)  # the registry's "openai"
    result = ExportResult()
    criteria = []
    for _key, definition in named:
        support = platform.can_export(definition)
        if not support.ok:
            result.refused[definition.key] = support.reason
            continue
        criteria.append(platform.to_json(definition, result.warnings))
    result.files[f"{suite.key}.eval.json"] = openai_evals.eval_text(suite.origin, criteria)
    return result
