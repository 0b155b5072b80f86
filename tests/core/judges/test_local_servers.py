"""Local model servers (llama.cpp, llama-cpp-python) as judges: the five ways they broke the judges,
each acted out by our scripted judge over real HTTP on 127.0.0.1 (the real server: tests/slow/)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.demo.fake_local import LocalServerHabits
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.judges.http.chat import ChatRequest, user
from studio.core.judges.http.probe import apply_probe, probe_endpoint
from studio.core.judges.http.providers.openai import PROVIDER as OPENAI
from studio.core.models import (
    BinaryJudge,
    CriteriaJudge,
    Criterion,
    PrebuiltJudge,
    RangeJudge,
    RubricJudge,
    Sample,
    Turn,
)
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

CHAT = "/v1/chat/completions"


@pytest.fixture
def local_judge(request: pytest.FixtureRequest) -> Iterator[FakeJudgeServer]:
    """The scripted judge with the habits a test names through ``indirect`` parametrisation."""
    habits, latency = getattr(request, "param", (LocalServerHabits(), 0.0))
    server = FakeJudgeServer(habits=habits, latency_ms=latency).start()
    yield server
    server.stop()


def every_kind(endpoint: str) -> list:
    return [
        BinaryJudge(key="b", criteria="Correct capital.", endpoint=endpoint),
        RubricJudge(
            key="r", prompt="Grade {submission} against {ground_truth}.", endpoint=endpoint
        ),
        RangeJudge(key="g", criteria="Correct capital.", endpoint=endpoint),
        CriteriaJudge(
            key="c", criteria=[Criterion(text="Names the capital", weight=1.0)], endpoint=endpoint
        ),
        PrebuiltJudge(key="f", metric_type="faithfulness", endpoint=endpoint),
    ]


def rag_sample() -> Sample:
    return Sample(
        id="rag",
        messages=[
            Turn(role="document", content="Paris is the capital of France."),
            Turn(role="user", content="Capital of France?"),
        ],
        completion="Paris is the capital of France.",
        expected="Paris",
    )


def probe_and_save(library: Library, name: str) -> tuple[EndpointConfig, list[str]]:
    repo = EndpointRepository.of(library)
    result = asyncio.run(probe_endpoint(repo.get(name)))
    updated, said = apply_probe(repo.get(name), result)
    repo.save(updated)
    return updated, [*result.notes, *said]


# --- 1. runaway generations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "local_judge", [(LocalServerHabits(unbounded_seconds=60.0), 0.0)], indirect=True
)
def test_every_judge_call_is_bounded(library, local_judge, score) -> None:
    """The server grinds for a minute on any request without max_tokens: no call may be one."""
    add_endpoint(library, local_judge, timeout=3.0, max_retries=0)
    for judge in every_kind("fake"):
        sample = (
            rag_sample()
            if isinstance(judge, PrebuiltJudge)
            else qa("s", "Capital?", "Paris", "Paris")
        )
        [outcome] = score(judge, [sample])
        assert outcome.status == "ok", (judge.kind, outcome.error)


def test_budget_order_judge_then_endpoint_then_call() -> None:
    config = EndpointConfig(name="e", base_url="http://127.0.0.1:1/v1", model="m")
    request = ChatRequest(messages=[user("hi")], answer_tokens=300)
    adapter = OPENAI
    assert adapter.payload(config, "m", request)["max_tokens"] == 300
    assert adapter.payload(config, "m", ChatRequest(messages=[user("hi")]))["max_tokens"] > 0
    capped = config.model_copy(update={"max_tokens": 64})
    assert adapter.payload(capped, "m", request)["max_tokens"] == 64
    explicit = request.model_copy(update={"max_tokens": 7})
    assert adapter.payload(capped, "m", explicit)["max_tokens"] == 7


def test_a_timed_out_request_is_sent_again_once_only(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge, timeout=0.5, max_retries=4)
    fake_judge.inject("slow", times=5, delay=3.0)
    [outcome] = score(BinaryJudge(key="b", criteria="c", endpoint="fake"), [qa("s", "q", "a")])
    assert outcome.status == "error"
    assert "timed out" in outcome.error and "not sent again" in outcome.error
    assert fake_judge.requests[CHAT] == 2


# --- 2. error bodies shown, invalid requests not retried ---------------------------------------------


@pytest.mark.parametrize(
    "local_judge", [(LocalServerHabits(structured="none"), 0.0)], indirect=True
)
def test_a_validation_error_is_shown_and_not_retried(library, local_judge, score) -> None:
    add_endpoint(library, local_judge, max_retries=4)
    judge = RubricJudge(key="r", prompt="Grade {submission}.", endpoint="fake")
    [outcome] = score(judge, [qa("s", "q", "a")])
    assert outcome.status == "error"
    assert "HTTP 500" in outcome.error and "validation error" in outcome.error
    assert "response_format" in outcome.error
    assert local_judge.requests[CHAT] == 1  # the same request would fail the same way

    # the probe learns the server takes no response_format; then the judge works
    updated, _ = probe_and_save(library, "fake")
    assert updated.structured_output == "none"
    [outcome] = score(judge, [qa("s2", "q", "a")])
    assert outcome.status == "ok", outcome.error


def test_a_transient_500_keeps_its_body_in_the_error(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge, max_retries=1)
    [outcome] = score(
        BinaryJudge(key="b", criteria="c", endpoint="fake"), [qa("s", "q", "a [[fault:500]]")]
    )
    assert outcome.status == "error"
    assert (
        "server error (scripted)" in outcome.error and "gave up after 2 attempts" in outcome.error
    )


# --- 3. a server without logprobs ----------------------------------------------------------------------


@pytest.mark.parametrize("local_judge", [(LocalServerHabits(logprobs=False), 0.0)], indirect=True)
def test_logprobs_refused_probe_and_range_fallback(library, local_judge, score, cli) -> None:
    add_endpoint(library, local_judge)
    judge = RangeJudge(key="g", criteria="Correct capital.", endpoint="fake")
    # not probed yet: the refused logprobs request turns into the sampling method, no error
    outcomes = score(
        judge, [qa("a", "Capital?", "Paris", "Paris"), qa("b", "Capital?", "Lyon", "Paris")]
    )
    for outcome in outcomes:
        assert outcome.status == "ok", outcome.error
        assert outcome.details["method"] == "sampled"
        assert "logprobs is not supported" in outcome.details["logprobs_refused"]
        assert not any(call.get("failed") for call in outcome.details["calls"])

    # `endpoints test` retries without logprobs and records that the server has none
    done = cli("endpoints", "test", "fake", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["logprobs"] is False
    assert any("logprobs refused" in note for note in report["notes"])
    assert EndpointRepository.of(library).get("fake").supports_logprobs is False
    before = local_judge.requests[CHAT]
    [outcome] = score(judge, [qa("c", "Capital?", "Paris", "Paris")], use_cache=False)
    assert outcome.details["method"] == "sampled" and "logprobs_refused" not in outcome.details
    # steps + reasoning + 5 score samples: no refused logprobs request any more
    assert local_judge.requests[CHAT] - before == 7


# --- 4. queueing is not latency; single-slot servers get concurrency 1 --------------------------------


@pytest.mark.parametrize("local_judge", [(LocalServerHabits(slots=1), 50.0)], indirect=True)
def test_single_slot_server_gets_concurrency_one_and_queue_time_is_apart(
    library, local_judge, score
) -> None:
    add_endpoint(library, local_judge, max_concurrency=8)
    updated, said = probe_and_save(library, "fake")
    assert updated.max_concurrency == 1
    assert any("one request at a time" in line and "concurrency set to 1" in line for line in said)

    samples = [qa(f"s{i}", "Capital?", "Paris", "Paris") for i in range(4)]
    outcomes = score(BinaryJudge(key="b", criteria="c", endpoint="fake"), samples)
    calls = [o.details["calls"][0] for o in outcomes]
    assert all(o.status == "ok" for o in outcomes)
    assert all("queue_ms" in c and "latency_ms" in c for c in calls)
    # four calls through one slot held ~50 ms each: three of them waited for it
    assert sum(1 for c in calls if c["queue_ms"] > 0) >= 3


def test_a_remote_server_keeps_its_concurrency(library, fake_judge) -> None:
    add_endpoint(library, fake_judge, max_concurrency=8)
    updated, said = probe_and_save(library, "fake")
    assert updated.max_concurrency == 8 and not any("concurrency" in line for line in said)


# --- 5. structured output where the server offers it -------------------------------------------------


@pytest.mark.parametrize(
    ("local_judge", "dialect"),
    [
        (
            (LocalServerHabits(structured="json_object_schema", nests_json=True), 0.0),
            "json_object_schema",
        ),
        ((LocalServerHabits(structured="json_schema", nests_json=True), 0.0), "json_schema"),
    ],
    indirect=["local_judge"],
)
def test_the_judges_schema_is_asked_for_in_the_servers_dialect(
    library, local_judge, score, dialect
) -> None:
    add_endpoint(library, local_judge)
    judge = RubricJudge(
        key="r", prompt="Grade {submission} against {ground_truth}.", endpoint="fake"
    )
    # without the schema the small model nests its JSON and the score cannot be read
    [before] = score(judge, [qa("a", "Capital?", "Paris", "Paris")])
    assert before.status == "error" and "no numeric score" in before.error

    updated, _ = probe_and_save(library, "fake")
    assert updated.structured_output == dialect
    [after] = score(judge, [qa("b", "Capital?", "Paris", "Paris")], use_cache=False)
    assert after.status == "ok", after.error
    assert after.rationale == "Scripted rule gave 0.5." and after.score == 0.5
