"""Judge fixtures: our scripted judge and reward servers on 127.0.0.1, endpoints, one-call scoring."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from judge_helpers import add_endpoint

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import GraderDefinition, Outcome, Sample
from studio.core.models.endpoints import EndpointConfig
from studio.core.scoring import GradingContext
from studio.core.store import Library


@pytest.fixture
def endpoint(library: Library, fake_judge: FakeJudgeServer) -> EndpointConfig:
    return add_endpoint(library, fake_judge)


Score = Callable[..., list[Outcome]]


@pytest.fixture
def score(library: Library) -> Score:
    """Grade samples with a real scorer (make_scorer as the engine calls it), then close it."""

    def run(grader: GraderDefinition, samples: Sequence[Sample], **ctx: Any) -> list[Outcome]:
        from studio.core.graders.registry import make_scorer

        async def go() -> list[Outcome]:
            scorer = make_scorer(grader, GradingContext(library=library, **ctx))
            try:
                return await scorer.score_batch(list(samples))
            finally:
                await scorer.aclose()

        return asyncio.run(go())

    return run
