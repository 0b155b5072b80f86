"""Each contract scored end to end through real sandbox workers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sandbox_helpers import Score, make_samples

from studio.core.graders.registry import make_scorer
from studio.core.models import FunctionGrader
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import BATCH_SIZE
from studio.core.scoring import GradingContext, Scorer

EXACT = """
from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    return 1.0 if (thread.completion() or "") == thread.metadata.get("expected") else 0.0
"""


def test_adaptive_exact_match(score: Score) -> None:
    samples = make_samples(5)
    samples[3] = samples[3].model_copy(update={"completion": "wrong"})
    outcomes, _ = score(EXACT, samples)
    assert [o.score for o in outcomes] == [1.0, 1.0, 1.0, 0.0, 1.0]
    assert all(o.status == "ok" and o.duration_ms > 0 for o in outcomes)


def test_adaptive_grader_that_really_awaits(score: Score) -> None:
    source = """
import asyncio
async def grade(thread):
    await asyncio.sleep(0)
    await asyncio.sleep(0.001)
    return float(len(thread.messages()))
"""
    outcomes, _ = score(source, make_samples(3))
    assert [o.score for o in outcomes] == [1.0, 1.0, 1.0]


def test_adaptive_grader_whose_first_step_needs_the_running_loop(score: Score) -> None:
    """The usual Adaptive grader awaits at once: a real sleep, gather, the running loop (issue 12)."""
    source = """
import asyncio
async def part(x):
    await asyncio.sleep(0.001)
    return x
async def grade(thread):
    await asyncio.sleep(0.001)
    loop = asyncio.get_running_loop()
    a, b = await asyncio.gather(part(1.0), part(2.0))
    return float(loop is not None) * (a + b) / 3.0
"""
    outcomes, _ = score(source, make_samples(3))
    assert [o.status for o in outcomes] == ["ok"] * 3, [o.error for o in outcomes]
    assert [o.score for o in outcomes] == [1.0, 1.0, 1.0]


def test_registry_builds_the_sandbox_scorer_for_function_graders(sandbox_pool: WorkerPool) -> None:
    grader = FunctionGrader(key="em", source=EXACT)
    scorer = make_scorer(grader, GradingContext(options={"sandbox_pool": sandbox_pool}))
    assert isinstance(scorer, Scorer)
    assert scorer.batch_size == BATCH_SIZE and scorer.parallel_batches == 2

    async def go() -> list[Any]:
        try:
            return await asyncio.gather(scorer.score_batch(make_samples(3)), scorer.score_batch(make_samples(2)))
        finally:
            await scorer.aclose()

    first, second = asyncio.run(go())
    assert [o.score for o in first + second] == [1.0] * 5


def test_mka1_sample_with_item_and_multi_scores(score: Score) -> None:
    source = """
def grade(sample, item):
    out = (sample.get("extracted_output") or "").strip()
    assert item["question"].startswith("question") and item["reference_answer"] == item["target"]
    assert sample["sample_id"].startswith("s") and sample["prompt"].startswith("question")
    return {"scores": {"exact_match": 1.0 if out == item["target"] else 0.0, "len": len(out)},
            "judge": {"output": out}}
"""
    outcomes, _ = score(source, make_samples(3), "mka1_sample")
    assert outcomes[1].scores == {"exact_match": 1.0, "len": 1.0}, outcomes
    assert outcomes[1].details["judge"] == {"output": "1"}


def test_mka1_batch_returns_metrics_and_sample_updates(score: Score) -> None:
    source = """
def grade_batch(samples):
    updates = [{"sample_id": s["sample_id"], "scores": {"correct": 1.0 if s["dataset_row"]["label"] == "pos" else 0.0}}
               for s in samples]
    return {"metrics": {"accuracy": sum(u["scores"]["correct"] for u in updates) / len(updates)},
            "samples": updates}
"""
    outcomes, scorer = score(source, make_samples(4), "mka1_batch")
    assert scorer.batch_size is None
    assert [o.scores.get("correct") for o in outcomes] == [0.0, 1.0, 0.0, 1.0]
    assert scorer.run_metrics() == {"accuracy": 0.5}


def test_letta_custom_grader(score: Score) -> None:
    source = """
from letta_evals.decorators import grader
from letta_evals.models import GradeResult, Sample

@grader
def same(sample: Sample, submission: str) -> GradeResult:
    ok = submission.strip() == (sample.ground_truth or "")
    return GradeResult(score=1.0 if ok else 0.0, rationale=f"input was {sample.input}")
"""
    samples = make_samples(2)
    samples[0] = samples[0].model_copy(update={"completion": "nope"})
    outcomes, _ = score(source, samples, "letta")
    assert [o.score for o in outcomes] == [0.0, 1.0]
    assert outcomes[1].rationale == "input was question 1"


def test_promptfoo_get_assert(score: Score) -> None:
    source = """
def get_assert(output, context):
    if output == "0":
        return False
    if output == "1":
        return 0.5
    return {"pass": True, "score": 0.9, "reason": context["vars"]["question"]}
"""
    outcomes, _ = score(source, make_samples(3), "promptfoo")
    assert [o.score for o in outcomes] == [0.0, 0.5, 0.9]
    assert outcomes[2].rationale == "question 2"


def test_printed_output_is_kept_per_sample(score: Score) -> None:
    source = """
def grade(sample, item):
    print("looking at", sample["sample_id"])
    return 1.0
"""
    outcomes, _ = score(source, make_samples(2), "mka1_sample")
    assert outcomes[1].details["printed"] == "looking at s1\n"


def test_model_calls_are_bridged_to_the_studio(score: Score) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def bridge(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        calls.append((kind, payload))
        return {"output_text": '{"verdict": "correct"}', "id": "resp_1"}

    source = """
import json
def grade(sample, item, ctx):
    r = ctx.responses_create(model="auto", input=sample["output_text"])
    return {"scores": {"judge": 1.0 if json.loads(r["output_text"])["verdict"] == "correct" else 0.0},
            "judge": {"response_id": r["id"]}}
"""
    outcomes, _ = score(source, make_samples(2), "mka1_sample", model_access=True, model_bridge=bridge)
    assert [o.score for o in outcomes] == [1.0, 1.0]
    assert calls == [("responses", {"model": "auto", "input": "0"}), ("responses", {"model": "auto", "input": "1"})]


def test_model_calls_without_a_bridge_or_over_the_limit_fail_clearly(score: Score) -> None:
    source = """
def grade(sample, item, ctx):
    for _ in range(3):
        ctx.embeddings_create(input=["a"])
    return 1.0
"""
    outcomes, _ = score(source, make_samples(1), "mka1_sample", model_access=True)
    assert "model access not configured" in (outcomes[0].error or "")
    outcomes, _ = score(source, make_samples(1), "mka1_sample", model_access=True, max_model_calls=2,
                        model_bridge=lambda kind, payload: {"data": []})
    assert "max_model_calls (2) exceeded" in (outcomes[0].error or "")
    outcomes, _ = score(source, make_samples(1), "mka1_sample")
    assert "model access is off" in (outcomes[0].error or "")


def test_a_grader_that_fails_to_load_errors_every_sample(score: Score) -> None:
    outcomes, _ = score("import json\nraise RuntimeError('no')\nasync def grade(t):\n    return 1.0\n", make_samples(2))
    assert all(o.status == "error" for o in outcomes)
    assert outcomes[0].error == "grader failed to load [execution] (line 2): RuntimeError: no"


def test_try_on_a_warm_pool_is_fast(score: Score, sandbox_pool: WorkerPool) -> None:
    sandbox_pool.warm()
    time.sleep(0.3)  # the spares finish starting, as they do while a user types
    started = sandbox_pool.started
    outcomes, _ = score(EXACT, make_samples(1))
    assert outcomes[0].score == 1.0
    assert sandbox_pool.started - started <= 1  # a spare graded it; at most the spare is replaced


def test_mka1_batch_over_many_samples_is_not_an_output_overflow(score: Score) -> None:
    source = """
def grade_batch(samples):
    return {"metrics": {"n": float(len(samples))},
            "samples": [{"sample_id": s["sample_id"], "scores": {"ok": 1.0}, "judge": {"note": "x" * 100}}
                        for s in samples]}
"""
    outcomes, scorer = score(source, make_samples(3000), "mka1_batch")
    assert all(o.status == "ok" and o.scores == {"ok": 1.0} for o in outcomes)
    assert scorer.run_metrics() == {"n": 3000.0}


def test_letta_extractor_picks_the_submission(score: Score) -> None:
    from studio.core.models import Extractor, Sample, Turn

    source = "from letta_evals import grader, GradeResult\n@grader\ndef g(sample, submission):\n    return GradeResult(score=1.0 if submission == 'first' else 0.0)\n"
    sample = Sample(id="a", messages=[Turn(role="user", content="q"), Turn(role="assistant", content="first")], completion="last")
    outcomes, _ = score(source, [sample], "letta", extractor=Extractor(kind="first_assistant"))
    assert outcomes[0].score == 1.0


def test_letta_empty_submission_scores_zero_before_the_grader_runs(score: Score) -> None:
    """letta-evals returns 0.0 for an empty submission without calling the grader (issue 12)."""
    source = """
from letta_evals.decorators import grader
from letta_evals.models import GradeResult

@grader
def always_one(sample, submission):
    return GradeResult(score=1.0, rationale="called")
"""
    samples = make_samples(2)
    samples[1] = samples[1].model_copy(update={"completion": ""})
    outcomes, _ = score(source, samples, "letta")
    assert [o.score for o in outcomes] == [1.0, 0.0]
    assert "Empty submission" in (outcomes[1].rationale or "")


def test_async_grader_importing_asyncio_inside_grade(score: Score) -> None:
    source = """
async def grade(thread):
    import asyncio
    await asyncio.sleep(0.001)
    return 1.0
"""
    outcomes, _ = score(source, make_samples(2))
    assert [o.score for o in outcomes] == [1.0, 1.0], [o.error for o in outcomes]
