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
from typing import Any

from studio.core.models import GraderDefinition
from studio.core.models.openai_grader import OpenAIGrader
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.platforms import openai_evals
from studio.core.platforms._fields import slug
from studio.core.store import LibraryError

from .app import CliApp

#: OpenAI types whose result is pass/fail: a sample passes when it scores 1.0
PASS_FAIL = ("string_check", "label_model")


def threshold(grader: GraderDefinition) -> float | None:
    """The suite threshold that makes a member pass where OpenAI's criterion passed."""
    if not isinstance(grader, OpenAIGrader):
        return None
    if grader.openai_type in PASS_FAIL:
        return 1.0
    return grader.pass_threshold


def suite_for(name: str, graders: list[GraderDefinition]) -> SuiteDefinition:
    members = [SuiteMember(grader=g.key, threshold=threshold(g)) for g in graders]
    return SuiteDefinition(key=slug(name, "openai-eval"), name=name, graders=members,
                           description="imported from an OpenAI eval")


def say(args: argparse.Namespace, line: str) -> None:
    """A line of the plain report (``--json`` prints one JSON document instead)."""
    if not args.json:
        print(line)


def finish(args: argparse.Namespace, app: CliApp, path: Path, graders: list[GraderDefinition],
           refused: dict[str, str]) -> dict[str, Any]:
    """Create the suite (and the dataset with ``--items``) once the graders are in; returns what was
    made for ``--json`` and the sentences of what was refused (in ``refused``)."""
    read = openai_evals.load(path)
    done: dict[str, Any] = {"eval": read.name, "shape": read.shape, "not_carried": read.not_carried}
    items = getattr(args, "items", None)
    samples = openai_evals.read_items(Path(items)) if items else None
    if args.dry_run or refused:
        return done
    suite = suite_for(read.name, graders)
    try:
        if app.library.suites.exists(suite.key):
            app.library.suites.save(suite, message=f"imported again from {path.name}")
        else:
            app.library.suites.create(suite, message=f"imported from OpenAI eval {path.name}")
        done["suite"] = suite.key
        say(args, f"suite {suite.key} ({len(suite.graders)} graders) for eval {read.name!r}")
    except LibraryError as exc:
        refused[f"suite {suite.key}"] = str(exc)
    if samples is not None:
        try:
            record = app.library.datasets.create(suite.key, samples, format="openai", source=Path(items).name)
            done["dataset"] = record.name
            say(args, f"dataset {record.name} ({record.sample_count} items)")
        except LibraryError as exc:
            refused[f"dataset {suite.key}"] = str(exc)
    if "suite" in done:
        target = done.get("dataset", "DATASET")
        print(f"run it: grader-studio run {suite.key} {target}", file=sys.stderr)
    return done
