"""An exported function grader, imported from the platform's file and run on its contract in our
sandbox, scores the demo dataset exactly as the original does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from studio.core.engine.scorer import GradingContext
from studio.core.models import FunctionGrader, Sample
from studio.core.models.files import load as load_definition
from studio.core.platforms import platforms

scorer_module = pytest.importorskip("studio.core.sandbox.scorer", reason="the sandbox is not there yet")

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "resources" / "demo"
PRIMARY = (".task.json", ".adaptive.json", ".openai.json", "suite.yaml", "promptfooconfig.yaml")


def samples() -> list[Sample]:
    rows = (DEMO / "datasets" / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    return [Sample.model_validate(json.loads(r)) for r in rows if r.strip()][:6]


async def score(grader: FunctionGrader, batch: list[Sample]) -> list[tuple[str, float | None]]:
    scorer = scorer_module.make_scorer(grader, GradingContext())
    try:
        outcomes = await scorer.score_batch(batch)
    finally:
        await scorer.aclose()
    return [(o.status, o.score) for o in outcomes]


@pytest.mark.skipif(not (DEMO / "datasets" / "qa.jsonl").exists(), reason="demo dataset not there yet")
def test_exported_function_graders_score_the_same(tmp_path: Path) -> None:
    functions = [load_definition(p) for p in sorted((DEMO / "graders").glob("qa-*.grader.yaml"))]
    functions = [g for g in functions if isinstance(g, FunctionGrader) and g.contract != "mka1_batch"]
    if not functions:
        pytest.skip("no per-sample function grader over the qa dataset in the demo library")
    batch = samples()
    checked = 0
    for grader in functions:
        original = asyncio.run(score(grader, batch))
        for platform in platforms().values():
            if not (platform.imports and platform.can_export(grader).ok):
                continue
            result = platform.export(grader)
            root = tmp_path / platform.name / grader.key
            for rel, text in result.files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text, encoding="utf-8")
            main = next(root / rel for s in PRIMARY for rel in result.files if rel.endswith(s))
            back = platform.import_(main).graders[0]
            assert isinstance(back, FunctionGrader)
            assert asyncio.run(score(back, batch)) == original, (platform.name, grader.key)
            checked += 1
    assert checked
