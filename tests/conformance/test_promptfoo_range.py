"""A range judge exported to promptfoo keeps its score range: promptfoo's own runAssertions runs the
exported llm-rubric (its rubric prompt and grading provider file, calling our scripted judge on
127.0.0.1) and scores every sample as the studio's range judge does with the same judge answers."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from conformance_samples import compare
from judge_helpers import add_endpoint
from platforms_env import NPM_MODULES, needs_promptfoo, run_json

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.graders.registry import make_scorer
from studio.core.models import Outcome, RangeJudge, Sample, Subrange
from studio.core.platforms import get_platform
from studio.core.platforms._fields import export_endpoints, load_yaml_text
from studio.core.scoring import GradingContext
from studio.core.store import Library

SIDE = Path(__file__).parent / "platform_side" / "promptfoo_python_side.mjs"
JUDGES = [
    RangeJudge(key="quality", criteria="How complete and correct is the answer?", endpoint="fake",
               evaluation_steps=["Check correctness.", "Check {{ completeness }}."],
               subrange_expectations=[Subrange(min=1, max=2, expectation="wrong"),
                                      Subrange(min=3, max=5, expectation="right {% if x %}")]),
    RangeJudge(key="ten", criteria="Rate the answer.", endpoint="fake", score_range=(0, 10), normalize=False,
               evaluation_steps=["Rate it."]),
    RangeJudge(key="signed", criteria="Agreement with the reference.", endpoint="fake", score_range=(-3, 3),
               evaluation_steps=["Compare."]),
]
# (output under judgement, the scripted judge's answer to any prompt that shows it)
ANSWERS = [
    ("alpha answer", "Mostly right but thin. SCORE: 4"),
    ("bravo answer", "It is correct, 3 of 5 facts. SCORE: 2"),
    ("charlie answer", "I would give it a 1."),
    ("delta answer", "score = 3"),
    ("echo answer", "SCORE: 0"),
    ("foxtrot answer", "Perfect.\nSCORE: 5\n"),
    ("golf answer", "SCORE: -2"),
]


def studio_scores(library: Library, judge: RangeJudge, samples: list[Sample]) -> list[Outcome]:
    async def go() -> list[Outcome]:
        scorer = make_scorer(judge, GradingContext(library=library))
        try:
            return await scorer.score_batch(samples)
        finally:
            await scorer.aclose()

    return asyncio.run(go())


@pytest.mark.timeout(600)
def test_promptfoo_scores_an_exported_range_judge_on_its_scale(
        library: Library, fake_judge: FakeJudgeServer, tmp_path: Path) -> None:
    needs_promptfoo()
    node = shutil.which("node")
    assert node
    endpoint = add_endpoint(library, fake_judge)
    for output, reply in ANSWERS:
        fake_judge.add_rule(output, reply)
    samples = [Sample(id=str(n), messages=[{"role": "user", "content": "Question?"}], completion=output)
               for n, (output, _) in enumerate(ANSWERS)]
    jobs, expected, labels = [], [], []
    for judge in JUDGES:
        with export_endpoints({"fake": endpoint}):
            result = get_platform("promptfoo").export(judge)
        for name, text in result.files.items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        config = load_yaml_text(result.files[f"{judge.key}.promptfooconfig.yaml"], "config")
        [assertion] = config["defaultTest"]["assert"]
        assert assertion["type"] == "llm-rubric"
        jobs.append({"assertion": assertion, "reasons": True,
                     "calls": [{"output": s.completion, "context": {"prompt": "Question?", "vars": {"input": "Question?"}}}
                               for s in samples]})
        expected.append([o.score if o.status == "ok" else f"error: {o.error}"
                         for o in studio_scores(library, judge, samples)])
        labels.append(judge.key)
    index = NPM_MODULES / "promptfoo" / "dist" / "src" / "index.js"
    out = run_json([node, str(SIDE)], {"index": str(index), "jobs": jobs}, cwd=tmp_path, timeout=600)
    bad: list[str] = []
    for label, mine, theirs in zip(labels, expected, out["scores"], strict=True):
        # an answer without an integer in range: the studio records no score (an error, left out of
        # aggregates); promptfoo fails the assertion with 0, its rule for any grading failure
        seen = [f"error: {reason}" if not passed and score == 0 and reason.startswith("no integer from")
                else score for score, passed, reason in theirs]
        mine = ["error: no integer" if isinstance(m, str) and "no integer from" in m else m for m in mine]
        seen = ["error: no integer" if isinstance(t, str) else t for t in seen]
        bad += compare("promptfoo", mine, seen, [f"{label} {a!r}" for a, _ in ANSWERS])
    assert not bad, "\n".join(bad)
    assert sum(isinstance(m, str) for row in expected for m in row) == 5  # out-of-range answers were tried
    # the scale is kept: not every sample maps to g-eval's 0..10 / 10
    assert expected[0][0] == 0.75 and expected[1][0] == 4.0 and expected[2][1] == pytest.approx(5 / 6)
