"""A teammate's function grader that returns huge finite scores (a square past the largest double
from ~1.3e154, a sum of two past it from ~9e307) never fails a run, ``runs show`` or a report, on
SQLite or PostgreSQL (where the tally's SQL failed: "value out of range: overflow"); the mean is
still the scores' mean, and a spread no double holds states no interval (never inf or NaN)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from studio.core.engine.runner import run_grader
from studio.core.engine.sections import load_run
from studio.core.models import FunctionGrader, Sample
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from tests.conftest import run_cli

#: the completion is the score the grader returns
SOURCE = """def get_assert(output, context):
    return float(output)
"""
CASES = {"two-1e308": ["1e308", "1e308"], "squares": ["1e155", "3", "-2"], "cancel": ["1e308", "1e308", "-1e308", "1"],
         "both-ends": ["-1.7976931348623157e308", "1.7976931348623157e308", "0.5"]}


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


@pytest.mark.parametrize("case", sorted(CASES))
def test_huge_scores_are_summarised_honestly_everywhere(library: Library, db_path: Path | str, case: str) -> None:
    scores = [float(s) for s in CASES[case]]
    library.graders.create(FunctionGrader(key="echo", contract="promptfoo", source=SOURCE))
    library.graders.create(FunctionGrader(key="again", contract="promptfoo", source=SOURCE))
    library.suites.create(SuiteDefinition(key="both", graders=[SuiteMember(grader="echo"), SuiteMember(grader="again")]))
    library.datasets.create("huge", [Sample(id=f"s{i}", completion=text, expected="x")
                                     for i, text in enumerate(CASES[case])])
    exact_mean = math.fsum(s / len(scores) for s in scores)
    for target in ("echo", "both"):
        run = run_grader(library, target, "huge")
        assert run.status == "completed", run
        sections = load_run(library, run.id)
        for summary in sections.summaries:
            assert summary.n == len(scores) and summary.mean == pytest.approx(exact_mean, rel=1e-12)
            assert min(scores) <= summary.mean <= max(scores)
            assert summary.mean_ci is None  # a spread past the largest double
            json.dumps(summary.to_json(), allow_nan=False)
        json.dumps(sections.figures().as_json(), allow_nan=False)
        shown = run_cli("runs", "show", str(run.id), "--json", db=db_path)  # type: ignore[arg-type]
        assert shown.returncode == 0, shown.stderr
        doc = json.loads(shown.stdout, parse_constant=lambda name: pytest.fail(f"{name} in runs show --json"))
        assert doc["run"]["status"] == "completed"
        printed = run_cli("runs", "show", str(run.id), db=db_path)  # type: ignore[arg-type]
        assert printed.returncode == 0 and "Traceback" not in printed.stderr, printed.stderr
        assert "nan" not in printed.stdout.lower().replace("n/a", "") and " inf" not in printed.stdout
