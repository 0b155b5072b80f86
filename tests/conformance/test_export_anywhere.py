"""Author once, export anywhere: every demo function grader, exported to every target that runs
Python, scores its demo dataset there exactly as the studio scores it.

letta-evals (ToolGrader), hud (the exported grade awaited) and promptfoo (runAssertions running the
python assertion) run the export with their own packages; MKA1 and OpenAI python graders have no
offline runner, so their exported ``grade(sample, item)`` is called directly in the platforms venv.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from conformance_samples import compare
from platforms_env import NPM_MODULES, VENV_PYTHON, needs_module, needs_promptfoo, run_json

from studio.core.datasets import read_dataset
from studio.core.models import FunctionGrader, Sample
from studio.core.models.files import load as load_definition
from studio.core.platforms import get_platform
from studio.core.platforms._adapters import entry_name
from studio.core.sandbox import payloads
from studio.core.sandbox.scorer import make_scorer
from studio.core.scoring import GradingContext

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "resources" / "demo"
SIDE = Path(__file__).parent / "platform_side"
TARGETS = ("mka1", "openai", "letta", "hud", "promptfoo")


def demo_functions() -> list[FunctionGrader]:
    found = [load_definition(p) for p in sorted((DEMO / "graders").glob("*.grader.yaml"))]
    return [g for g in found if isinstance(g, FunctionGrader)]


def dataset(grader: FunctionGrader) -> list[Sample]:
    name = "json_outputs" if grader.key.startswith(("json", "contact")) else "qa"
    return read_dataset(DEMO / "datasets" / f"{name}.jsonl").samples


def studio_scores(grader: FunctionGrader, samples: list[Sample]) -> list[Any]:
    async def go() -> list[Any]:
        scorer = make_scorer(grader, GradingContext())
        try:
            return [o.score if o.status == "ok" else f"error: {o.error}" for o in await scorer.score_batch(samples)]
        finally:
            await scorer.aclose()

    return asyncio.run(go())


def export(grader: FunctionGrader, target: str, root: Path) -> tuple[Path, dict[str, str]]:
    result = get_platform(target).export(grader)
    base = root / target / grader.key
    for rel, text in result.files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text, encoding="utf-8")
    return base, result.files


def python_job(grader: FunctionGrader, target: str, samples: list[Sample], root: Path) -> dict[str, Any]:
    base, files = export(grader, target, root)
    job: dict[str, Any] = {"target": target, "dir": str(base), "metric": grader.metric.key}
    if target == "letta":
        job["file"] = f"{grader.key}.py"
        job["entry"] = entry_name(grader) if grader.contract != "letta" else (
            grader.function_name or __import__("studio.core.platforms.letta", fromlist=["x"]).grader_functions(
                grader.source)[0])
        job["calls"] = [{"input": payloads.letta(s)["sample"]["input"], "ground_truth": s.expected,
                         "extra_vars": s.fields, "submission": s.completion or ""} for s in samples]
    elif target == "inspect":
        job["file"] = next(f for f in files if f.endswith("_inspect.py"))
        job["calls"] = [{"answer": s.completion or "", "expected": s.expected, "question": s.input_text(),
                         "row": s.fields} for s in samples]
    elif target == "hud":
        job["file"] = next(f for f in files if f.endswith("_hud.py"))
        job["calls"] = [{"answer": s.completion or "", "expected": s.expected, "question": s.input_text(),
                         "row": s.fields} for s in samples]
    else:
        job["file"] = next(f for f in files if f.endswith((".task.json", ".openai.json")))
        if target == "mka1":
            job["calls"] = [payloads.mka1_sample(s) for s in samples]
        else:  # OpenAI: the item is the dataset row, as the studio passes it (MKA1's keys included)
            job["calls"] = [{"sample": {"output_text": s.completion or ""}, "item": payloads.mka1_item(s)}
                            for s in samples]
    return job


@pytest.fixture(scope="module")
def graders() -> list[FunctionGrader]:
    found = demo_functions()
    assert {g.contract for g in found} >= {"adaptive", "mka1_sample", "letta", "promptfoo"}
    return [g for g in found if g.contract != "mka1_batch"]


def test_batch_graders_are_refused_naming_a_target_that_can() -> None:
    batch = next(g for g in demo_functions() if g.contract == "mka1_batch")
    for target in ("openai", "letta", "hud", "promptfoo"):
        support = get_platform(target).can_export(batch)
        assert not support.ok and "MKA1" in support.reason
    assert get_platform("mka1").can_export(batch).ok


def test_python_targets_score_like_the_studio(graders: list[FunctionGrader], tmp_path: Path) -> None:
    needs_module("letta_evals")
    needs_module("hud.graders")
    needs_module("inspect_ai")
    jobs, expected, labels = [], [], []
    for grader in graders:
        samples = dataset(grader)
        mine = studio_scores(grader, samples)
        assert all(not isinstance(m, str) for m in mine), (grader.key, mine[:3])
        for target in ("mka1", "openai", "letta", "hud", "inspect"):
            assert get_platform(target).can_export(grader).ok, (grader.key, target)
            if target == "inspect" and grader.contract in ("adaptive", "mka1_sample"):
                continue  # Inspect's own exports of these read state.messages (tests/core/platforms/test_clients)
            jobs.append(python_job(grader, target, samples, tmp_path))
            expected.append(mine)
            labels.append(f"{grader.key} -> {target}")
    out = run_json([str(VENV_PYTHON), str(SIDE / "python_targets_side.py")], {"jobs": jobs})
    bad: list[str] = []
    for label, mine, theirs in zip(labels, expected, out["scores"], strict=True):
        bad += compare(label.split(" -> ")[1], mine, theirs, [f"{label} #{i}" for i in range(len(mine))])
    assert not bad, "\n".join(bad[:30])


PROMPTFOO_SAMPLES = 4  # promptfoo starts a python process per call: a slice of each dataset


@pytest.mark.timeout(600)
def test_promptfoo_runs_the_exported_assertion_like_the_studio(graders: list[FunctionGrader], tmp_path: Path) -> None:
    needs_promptfoo()
    node = shutil.which("node")
    assert node
    index = NPM_MODULES / "promptfoo" / "dist" / "src" / "index.js"
    jobs, expected, labels = [], [], []
    for grader in graders:
        samples = dataset(grader)[:PROMPTFOO_SAMPLES]
        expected.append(studio_scores(grader, samples))
        base, _ = export(grader, "promptfoo", tmp_path)
        jobs.append({"assertion": {"type": "python", "value": f"file://{base / (grader.key + '.py')}"},
                     "calls": [payloads.promptfoo(s) for s in samples]})
        labels.append(grader.key)
    out = run_json([node, str(SIDE / "promptfoo_python_side.mjs")], {"index": str(index), "jobs": jobs},
                   cwd=tmp_path, timeout=600)
    bad: list[str] = []
    for label, mine, theirs in zip(labels, expected, out["scores"], strict=True):
        bad += compare("promptfoo", mine, theirs, [f"{label} #{i}" for i in range(len(mine))])
    assert not bad, "\n".join(bad[:30])
