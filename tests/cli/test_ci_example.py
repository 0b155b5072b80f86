"""docs/ci-example/graders.yml, the GitHub Actions workflow docs/ci.md walks through, run step by
step on this machine: each ``run:`` script in bash, in a copy of the example's repository layout,
against the scripted judge instead of OpenAI. Only the install step (the studio is installed here)
and the ``uses:`` actions (GitHub's own) are not run; the files those actions publish must exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from junitparser import JUnitXml
from ruamel.yaml import YAML

from studio.core.demo.fake_server import FakeJudgeServer

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "ci-example"


def expand(value: str, tmp: Path) -> str:
    """GitHub's ``${{ ... }}`` expressions, as the runner would fill them here."""
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: {
        "secrets.OPENAI_API_KEY": "sk-local-test", "runner.temp": str(tmp)}[m.group(1)], value)


def test_the_documented_workflow_runs_here(tmp_path: Path, fake_judge: FakeJudgeServer) -> None:
    workflow = YAML(typ="safe").load((EXAMPLE / "graders.yml").read_text())
    job = workflow["jobs"]["grade"]
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo)
    summary = tmp_path / "step-summary.md"
    env = {**os.environ, **{k: expand(str(v), tmp_path) for k, v in job["env"].items()},
           "JUDGE_BASE_URL": fake_judge.base_url, "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    ran, used = [], []
    for step in job["steps"]:
        if "uses" in step:
            used.append(step)
            continue
        script = step["run"]
        if script.strip() == "pip install grader-studio":
            continue  # installed here already
        done = subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, (step.get("name"), done.stdout, done.stderr)
        ran.append((step.get("name"), done))
    names = [name for name, _ in ran]
    assert names == ["Register the judge endpoint (with its prices, so the run reports its cost)",
                     "Import the graders and the dataset from the repository", "What the run will cost", "Grade"]
    dry = dict(ran)["What the run will cost"].stdout
    assert "8 samples, 8 judge calls" in dry and "o200k_base tokenizer" in dry
    grade = dict(ran)["Grade"]
    assert "verdict: mean 0.8750, threshold 0.8: PASS" in grade.stderr
    assert "cost $" in grade.stdout

    suite = next(iter(JUnitXml.fromfile(str(repo / "reports" / "junit.xml"))))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (8, 1, 0, 0)
    failed = [case.name for case in suite if not case.is_passed]
    assert failed == ["qa-6"]  # the Hamlet answer names the wrong author
    markdown = (repo / "reports" / "summary.md").read_text()
    assert "**Verdict: PASS**" in markdown and summary.read_text() == markdown + "\n"
    # what the two actions publish is there
    published = [step["with"].get("path") or step["with"].get("report_paths") for step in used
                 if {"path", "report_paths"} & set(step.get("with") or {})]
    assert "reports/" in published and "reports/junit.xml" in published
    for path in published:
        assert (repo / path).exists()
