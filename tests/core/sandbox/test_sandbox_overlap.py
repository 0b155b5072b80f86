"""Function graders that wait overlap as far as the run's concurrency asks: a plain grader across
worker processes (no threads in the sandbox), an ``async def`` grader inside a few workers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext

PLAIN = """import os, time
TOKEN = os.urandom(8).hex()  # one per worker process

def get_assert(output, context):
    time.sleep(0.02)
    return {"pass": True, "score": 1.0, "reason": TOKEN}
"""

ASYNC = """import asyncio, os
TOKEN = os.urandom(8).hex()
waiting = peak = 0

async def get_assert(output, context):
    global waiting, peak
    waiting += 1
    peak = max(peak, waiting)
    await asyncio.sleep(0.05)
    waiting -= 1
    print("sample", output)
    return {"pass": True, "score": 1.0, "reason": f"{TOKEN} {peak}"}
"""


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    pool = WorkerPool(size=2)
    pool.warm()
    yield pool
    pool.close()


def grade(pool: WorkerPool, source: str, batches: int, per_batch: int, concurrency: int) -> tuple[list[Outcome], FunctionScorer]:
    grader = FunctionGrader(key="t", contract="promptfoo", source=source, timeout_seconds=10.0)
    scorer = FunctionScorer(grader, GradingContext(concurrency=concurrency, options={"sandbox_pool": pool}))
    samples = [Sample(id=f"s{i}", completion=str(i)) for i in range(batches * per_batch)]

    async def run() -> list[Outcome]:  # what the engine does: parallel_batches batches at once
        parts = await asyncio.gather(*(scorer.score_batch(samples[b * per_batch:(b + 1) * per_batch])
                                       for b in range(batches)))
        return [o for part in parts for o in part]

    try:
        return asyncio.run(run()), scorer
    finally:
        scorer.close()


def test_a_plain_waiting_grader_uses_a_worker_per_batch_in_flight(pool: WorkerPool) -> None:
    # asyncio.to_thread's shared pool used to cap this at cpu count + 4 (6 here) workers
    outcomes, scorer = grade(pool, PLAIN, batches=10, per_batch=2, concurrency=10)
    assert scorer.parallel_batches == 10
    assert all(o.status == "ok" for o in outcomes), [o.error for o in outcomes]
    assert len({o.rationale for o in outcomes}) == 10


def test_an_async_grader_overlaps_its_samples_inside_few_workers(pool: WorkerPool) -> None:
    outcomes, scorer = grade(pool, ASYNC, batches=2, per_batch=24, concurrency=16)
    assert scorer.spec.overlap == 8 and scorer.min_batch == 8 and scorer.parallel_batches == 4
    assert all(o.status == "ok" for o in outcomes), [o.error for o in outcomes]
    tokens = {o.rationale.split()[0] for o in outcomes}  # type: ignore[union-attr]
    peaks = [int(o.rationale.split()[1]) for o in outcomes]  # type: ignore[union-attr]
    assert len(tokens) <= 2  # at most the pool's two workers, not one process per sample
    assert max(peaks) == 8  # the overlap asked for, never more
    # what each sample printed stays with that sample
    assert [o.details.get("printed") for o in outcomes[:3]] == ["sample 0\n", "sample 1\n", "sample 2\n"]
