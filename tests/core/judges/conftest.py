"""Judge fixtures: our scripted judge and reward servers on 127.0.0.1, endpoints, one-call scoring."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from judge_helpers import add_endpoint

from studio.core.engine.scorer import GradingContext
from studio.core.judges.endpoints import EndpointConfig
from studio.core.judges.fake_server import FakeJudgeServer, FakeRewardServer
from studio.core.models import GraderDefinition, Outcome, Sample
from studio.core.store import Library


@pytest.fixture
def fake_judge() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def reward_server() -> Iterator[FakeRewardServer]:
    server = FakeRewardServer().start()
    yield server
    server.stop()


@pytest.fixture
def endpoint(library: Library, fake_judge: FakeJudgeServer) -> EndpointConfig:
    return add_endpoint(library, fake_judge)


Score = Callable[..., list[Outcome]]


@pytest.fixture
def score(library: Library) -> Score:
    """Grade samples with a real scorer (make_scorer as the engine calls it), then close it."""

    def run(grader: GraderDefinition, samples: Sequence[Sample], **ctx: Any) -> list[Outcome]:
        from studio.core.engine.registry import make_scorer

        async def go() -> list[Outcome]:
            scorer = make_scorer(grader, GradingContext(library=library, **ctx))
            try:
                return await scorer.score_batch(list(samples))
            finally:
                await scorer.aclose()

        return asyncio.run(go())

    return run
