"""An exported function grader, imported from the platform's file and run on its contract in our
sandbox, scores the demo dataset exactly as the original does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from studio.core.datasets import read_dataset
from studio.core.models import FunctionGrader, Sample
from studio.core.models.files import load as load_definition
from studio.core.platforms import platforms
from studio.core.sandbox.scorer import make_scorer
from studio.core.scoring import GradingContext

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "resources" / "demo"
PRIMARY = (".task.json", ".adaptive.json", ".openai.json", "suite.yaml", "promptfooconfig.yaml")


def samples(grader: FunctionGrader) -> list[Sample]:
    """The whole demo dataset the grader is written for (JSON graders: the extraction set)."""
    name = "json_outputs" if {"json", "extraction"} & set(grader.tags) or grader.key.startswith(("json", "contact")) \
        else "qa"
    return read_dataset(DEMO / "datasets" / f"{name}.jsonl").samples


async def score(grader: FunctionGrader, batch: list[Sample]) -> tuple[list[tuple[str, float | None]], dict]:
    scorer = make_scorer(grader, GradingContext())
    try:
        outcomes = await scorer.score_batch(batch)
        metrics = scorer.run_metrics()
    finally:
        await scorer.aclose()
    return [(o.status, o.score) for o in outcomes], metrics


def test_exported_function_graders_score_the_same(tmp_path: Path) -> None:
    functions = [load_definition(p) for p in sorted((DEMO / "graders").glob("*.grader.yaml"))]
    functions = [g for g in functions if isinstance(g, FunctionGrader)]
    assert {g.contract for g in functions} >= {"adaptive", "mka1_sample", "mka1_batch", "letta", "promptfoo"}
    checked = 0
    for grader in functions:
        batch = samples(grader)
        original = asyncio.run(score(grader, batch))
        assert all(status == "ok" for status, _ in original[0]), grader.key
        for platform in platforms().values():
            if not (platform.imports and platform.can_export(grader).ok) or platform.name == "inspect":
                continue  # Inspect imports a task file's built-in scorers, not the studio's @scorer export
            result = platform.export(grader)
            if any("adapter" in w for w in result.warnings):
                continue  # another contract in a generated adapter: tests/conformance runs those on the platforms
            root = tmp_path / platform.name / grader.key
            for rel, text in result.files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text, encoding="utf-8")
            main = next(root / rel for s in PRIMARY for rel in result.files if rel.endswith(s))
            back = platform.import_(main).graders[0]
            assert isinstance(back, FunctionGrader)
            assert asyncio.run(score(back, batch)) == original, (platform.name, grader.key)
            checked += 1
    assert checked >= len(functions)  # every demo function grader goes somewhere and comes back
