"""``--max-cost`` holds against a server that reports no usage: each such answer is charged at its
worst case (the request's tokens counted here, the answer at its max_tokens), so a generation and a
run stop at the cap instead of spending without limit at a counted cost of zero. Real processes,
the scripted server on 127.0.0.1 with its usage block left out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

from studio.core.datasets import read_dataset
from studio.core.demo import model_endpoint_config
from studio.core.demo.fake_local import LocalServerHabits
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.paths import demo_dir
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

PRICES = {"price_input": "0.15", "price_output": "0.60"}
MAX_TOKENS = 64


@pytest.fixture
def silent() -> Iterator[FakeJudgeServer]:
    """Answers with no ``usage`` block (as some OpenAI-compatible servers do)."""
    server = FakeJudgeServer(latency_ms=5, habits=LocalServerHabits(usage=False)).start()
    yield server
    server.stop()


def _priced(config: EndpointConfig, **extra: object) -> EndpointConfig:
    return EndpointConfig.model_validate({**config.model_dump(), **PRICES, "retry_backoff": 0.01,
                                          "max_retries": 0, "max_concurrency": 1, **extra})


def test_a_generation_stops_at_the_cap_though_no_answer_counts_its_tokens(cli, db_path: Path,  # type: ignore[no-untyped-def]
                                                                           silent: FakeJudgeServer) -> None:
    qa = read_dataset(demo_dir() / "datasets" / "qa.jsonl")
    with Library.open(db_path) as lib:
        lib.datasets.create("qa", qa.samples, format=qa.format)
        EndpointRepository.of(lib).save(_priced(model_endpoint_config("model-a", "scripted-model-a", silent.port)))
    # one worst-case call: >= 64 answer tokens at $0.60/M = $0.0000384, so $0.0001 is about 3 calls
    done = cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a", "--max-tokens", str(MAX_TOKENS),
               "--max-cost", "0.0001", "--json")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    answered = sum(silent.generated.values())
    assert result["status"] == "stopped" and "--max-cost" in result["reason"]
    assert 1 <= answered <= 4 < len(qa.samples)  # stopped at the cap, not after all 60
    assert Fraction(result["cost_usd"]) >= Fraction(1, 10_000)
    assert result["completion_tokens"] == MAX_TOKENS * answered  # each answer charged at its max_tokens
    assert result["prompt_tokens"] > 0


def test_a_run_stops_at_the_cap_though_no_answer_counts_its_tokens(cli, db_path: Path,  # type: ignore[no-untyped-def]
                                                                    silent: FakeJudgeServer) -> None:
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(_priced(EndpointConfig(name="silent", base_url=silent.base_url,
                                                                model="gpt-4o-mini", timeout=5.0)))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="silent"))
        lib.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital? ({i})")],
                                          completion="Paris", expected="Paris") for i in range(40)])
    done = cli("run", "judge", "qa", "--max-cost", "0.0002", "--json")
    result = json.loads(done.stdout)
    calls = silent.requests["/v1/chat/completions"]
    assert result["status"] == "stopped", done.stderr
    assert 1 <= calls < 40
    usage = result["usage"]["total"]
    assert usage["calls"] == calls and usage["completion_tokens"] > 0 and usage["prompt_tokens"] > 0
    assert Fraction(usage["cost_usd"]) >= Fraction(2, 10_000)


def test_without_a_cap_an_answer_without_usage_records_none(cli, db_path: Path, silent: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    """No cap, nothing to hold: the tokens stored are the server's (none), not an estimate."""
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(name="silent", base_url=silent.base_url,
                                                       model="gpt-4o-mini", timeout=5.0, retry_backoff=0.01))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="silent"))
        lib.datasets.create("qa", [Sample(id="q", messages=[Turn(role="user", content="Capital?")],
                                          completion="Paris", expected="Paris")])
    done = cli("run", "judge", "qa", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["usage"]["total"]["prompt_tokens"] == 0


def test_dry_runs_say_which_endpoints_may_answer_without_usage(cli, db_path: Path, silent: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    """A dry run calls nothing, so it tells by the endpoint: the providers' own APIs count every
    answer's tokens; any other server may not, and the line says how a cap charges it then."""
    qa = read_dataset(demo_dir() / "datasets" / "qa.jsonl")
    with Library.open(db_path) as lib:
        lib.datasets.create("qa", qa.samples, format=qa.format)
        EndpointRepository.of(lib).save(_priced(EndpointConfig(name="local", base_url=silent.base_url,
                                                               model="gpt-4o-mini", timeout=5.0)))
        EndpointRepository.of(lib).save(_priced(EndpointConfig(name="openai", base_url="https://api.openai.com/v1",
                                                               model="gpt-4o-mini", timeout=5.0)))
        lib.graders.create(BinaryJudge(key="local-judge", criteria="Correct?", endpoint="local"))
        lib.graders.create(BinaryJudge(key="openai-judge", criteria="Correct?", endpoint="openai"))
    for key, endpoint, counted in (("local-judge", "local", False), ("openai-judge", "openai", True)):
        text = cli("run", key, "qa", "--limit", "2", "--dry-run")
        assert text.returncode == 0, text.stderr
        assert (f"endpoint {endpoint} may answer without token counts" in text.stdout) is not counted
        found = json.loads(cli("run", key, "qa", "--limit", "2", "--dry-run", "--json").stdout)
        assert found["graders"][0]["endpoints"][endpoint]["reports_usage"] is counted
        generation = cli("generate", "qa", "--endpoint", endpoint, "--name", "out", "--limit", "2", "--dry-run")
        assert generation.returncode == 0, generation.stderr
        assert (f"endpoint {endpoint} may answer without token counts" in generation.stdout) is not counted
    assert silent.requests["/v1/chat/completions"] == 0
