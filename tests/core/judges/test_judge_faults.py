"""Every fault is retried; a fault that persists becomes that sample's error and the batch goes on."""

from __future__ import annotations

import time

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.models import BinaryJudge

JUDGE = BinaryJudge(key="b", criteria="Correct capital.", endpoint="fake")

TRANSIENT = [
    ("429", "[[fault:429x2@0.05]]"),
    ("500", "[[fault:500x2]]"),
    ("slow", "[[fault:slowx1@1.5]]"),  # longer than the 0.5 s timeout
    ("malformed", "[[fault:malformedx2]]"),
    ("drop", "[[fault:dropx2]]"),
]


@pytest.mark.parametrize(("kind", "marker"), TRANSIENT)
def test_transient_faults_are_retried(library, fake_judge, score, kind, marker) -> None:
    add_endpoint(library, fake_judge, timeout=0.5)
    [outcome] = score(JUDGE, [qa("s", "Capital of France?", f"Paris {marker}", "Paris")])
    assert outcome.status == "ok", outcome.error
    assert outcome.score == 1.0
    assert outcome.details["calls"][0]["attempts"] > 1


PERSISTENT = [
    ("429", "[[fault:429@0.05]]"),
    ("500", "[[fault:500]]"),
    ("slow", "[[fault:slow@1]]"),
    ("malformed", "[[fault:malformed]]"),
    ("drop", "[[fault:drop]]"),
]


@pytest.mark.parametrize(("kind", "marker"), PERSISTENT)
def test_persistent_faults_fail_only_their_sample(library, fake_judge, score, kind, marker) -> None:
    add_endpoint(library, fake_judge, timeout=0.3, max_retries=2)
    samples = [
        qa("good-1", "Capital of France?", "Paris", "Paris"),
        qa("bad", "Capital of France?", f"Paris {marker}", "Paris"),
        qa("good-2", "Capital of France?", "Lyon", "Paris"),
    ]
    good1, bad, good2 = score(JUDGE, samples)
    assert (good1.status, good1.score) == ("ok", 1.0)
    assert (good2.status, good2.score) == ("ok", 0.0)
    assert bad.status == "error" and bad.score is None
    assert "gave up after 3 attempts" in bad.error
    expected = {
        "429": "HTTP 429",
        "500": "HTTP 500",
        "slow": "timed out",
        "malformed": "malformed",
        "drop": "connection",
    }
    assert expected[kind] in bad.error


def test_retry_after_is_honoured(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge)
    started = time.perf_counter()
    [outcome] = score(JUDGE, [qa("s", "q", "Paris [[fault:429x1@1]]", "Paris")])
    elapsed = time.perf_counter() - started
    assert outcome.status == "ok"
    assert elapsed >= 1.0  # the server said "Retry-After: 1"; our own backoff would be 10 ms


def test_injected_faults_and_client_errors(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge)
    fake_judge.inject("500", times=1)
    fake_judge.inject("drop", times=1)
    [outcome] = score(JUDGE, [qa("s", "q", "Paris", "Paris")])
    assert outcome.status == "ok" and outcome.details["calls"][0]["attempts"] == 3
    # a 4xx other than 429 is not worth retrying
    add_endpoint(library, fake_judge, name="wrong", base_url=fake_judge.url + "/nope")
    [bad] = score(JUDGE, [qa("s", "q", "Paris", "Paris")], endpoint="wrong", use_cache=False)
    assert bad.status == "error" and "HTTP 404" in bad.error
    assert fake_judge.requests["/nope/chat/completions"] == 1


def test_requests_per_minute_limit(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge, requests_per_minute=600)  # one every 0.1 s
    started = time.perf_counter()
    outcomes = score(JUDGE, [qa(str(i), "q", f"Paris {i}", "Paris") for i in range(6)])
    assert all(o.status == "ok" for o in outcomes)
    assert time.perf_counter() - started >= 0.45


def test_concurrency_is_bounded(library, score) -> None:
    from studio.core.demo.fake_server import FakeJudgeServer

    with FakeJudgeServer(latency_ms=100) as server:
        add_endpoint(library, server, max_concurrency=2)
        started = time.perf_counter()
        score(JUDGE, [qa(str(i), "q", f"Paris {i}", "Paris") for i in range(6)])
        assert time.perf_counter() - started >= 0.3  # 6 calls, 2 at a time, 100 ms each


def test_unknown_endpoint_is_refused_before_the_run(library, score) -> None:
    from studio.core.store.errors import EndpointNotFound

    with pytest.raises(EndpointNotFound, match="no endpoint named 'fake'"):
        score(JUDGE, [qa("s", "q", "a")])


def test_judges_on_one_endpoint_share_its_limit(library) -> None:
    import asyncio

    from studio.core.demo.fake_server import FakeJudgeServer
    from studio.core.graders.registry import make_scorer
    from studio.core.scoring import GradingContext

    async def two_judges_at_once() -> None:
        ctx = GradingContext(library=library, use_cache=False)
        first = make_scorer(JUDGE, ctx)
        second = make_scorer(JUDGE.model_copy(update={"key": "b2", "criteria": "Other."}), ctx)
        samples = [qa(str(i), "q", f"Paris {i}", "Paris") for i in range(3)]
        await asyncio.gather(first.score_batch(samples), second.score_batch(samples))
        await first.aclose()
        await second.aclose()

    with FakeJudgeServer(latency_ms=100) as server:
        add_endpoint(library, server, max_concurrency=2)
        started = time.perf_counter()
        asyncio.run(two_judges_at_once())
        assert time.perf_counter() - started >= 0.3  # 6 calls, 2 at a time (not 4), 100 ms each
