"""External endpoints: Adaptive's reward-server protocol, one by one and in batches."""

from __future__ import annotations

import asyncio

import pytest
from judge_helpers import qa

from studio.core.judges.external import make_scorer as make_external
from studio.core.judges.render import render_prompt
from studio.core.models import ExternalEndpoint
from studio.core.scoring import GradingContext

SAMPLES = [
    qa("a", "Capital of France?", "Paris", "Paris"),
    qa("b", "Capital of France?", "Lyon", "Paris"),
    qa("c", "Anything", "so-so [[reward=0.25]]"),
    qa("d", "Anything", "broken [[reward=oops]]"),
    qa("e", "Anything", "Paris [[fault:500]]", "Paris"),
    qa("f", "Anything", "Paris [[fault:dropx1]]", "Paris"),
]
EXPECTED = [("ok", 1.0), ("ok", 0.0), ("ok", 0.25), ("invalid", 0.0), ("error", None), ("ok", 1.0)]


@pytest.mark.parametrize("batch", [False, True])
def test_rewards(reward_server, score, batch) -> None:
    grader = ExternalEndpoint(key="rs", url=reward_server.url, batch=batch, timeout_seconds=2)
    samples = SAMPLES if not batch else SAMPLES[:4]  # a batch shares one fate on faults
    outcomes = score(grader, samples)
    assert [(o.status, o.score) for o in outcomes] == EXPECTED[: len(samples)]
    assert outcomes[0].rationale == "scripted reward 1.0"
    assert outcomes[0].raw["id"] == "a"
    path = "/batch_score" if batch else "/score"
    assert reward_server.requests[path] >= 1


def test_payload_shape_and_info(reward_server) -> None:
    sample = qa("x", "Q?", "A.", "A")
    body = (
        render_prompt(ExternalEndpoint(key="rs", url=reward_server.url), sample).messages[0].content
    )
    assert '"turns"' in body and '"id": "x"' in body and '"expected": "A"' in body

    async def info() -> dict:
        scorer = make_external(ExternalEndpoint(key="rs", url=reward_server.url), GradingContext())
        try:
            return await scorer.info()
        finally:
            await scorer.aclose()

    assert asyncio.run(info())["name"] == "fake-reward-server"


def test_a_failed_batch_fails_each_of_its_samples(reward_server, score) -> None:
    grader = ExternalEndpoint(key="rs", url=reward_server.url, batch=True, timeout_seconds=2)
    outcomes = score(grader, [qa("a", "q", "x [[fault:500]]"), qa("b", "q", "y")])
    assert [o.status for o in outcomes] == ["error", "error"]
    assert "HTTP 500" in outcomes[0].error
