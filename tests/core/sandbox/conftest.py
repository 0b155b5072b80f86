"""A small real worker pool shared by the sandbox tests, and a helper that scores samples with it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_helpers import Score

from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext


@pytest.fixture(scope="session")
def sandbox_pool() -> Iterator[WorkerPool]:
    pool = WorkerPool(size=2)
    pool.warm()
    yield pool
    pool.close()


@pytest.fixture
def score(sandbox_pool: WorkerPool) -> Iterator[Score]:
    scorers: list[FunctionScorer] = []

    def run(source: str, samples: list[Sample], contract: str = "adaptive", **options: Any) -> tuple[list[Outcome], FunctionScorer]:
        bridge = options.pop("model_bridge", None)
        grader = FunctionGrader(key="t", source=source, contract=contract, **{"timeout_seconds": 2.0, "memory_mb": 256, **options})  # type: ignore[arg-type]
        ctx = GradingContext(options={"sandbox_pool": sandbox_pool, **({"model_bridge": bridge} if bridge else {})})
        scorer = FunctionScorer(grader, ctx)
        scorers.append(scorer)
        return scorer.score_sync(samples), scorer

    yield run
    for scorer in scorers:
        scorer.close()
