"""Every judge kind against a real llama.cpp server (llama-cpp-python + SmolLM2-135M from PyPI).

The slow suite (``pytest -m slow``; CI runs it after the default suite). What it proves is the
protocol, not the grades: a 135M model's verdicts are noise. Every sample ends with a result or
an error that keeps the model's raw answer, none times out; logprobs are read when the server
gives them and sampled when it refuses them; ``endpoints test`` reports what the server offers.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.demo import build_demo
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.http.local_server import LocalJudgeServer, demo_model_path, server_installed
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

# a CPU model: minutes, not the default suite's two-minute cap per test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

# one grader of every judge kind in the demo library, and the dataset it grades
KINDS = [
    ("qa-correctness-judge", "qa"),  # binary
    ("qa-rubric-letta", "qa"),  # rubric
    ("answer-quality-1to5", "qa"),  # range
    ("rag-answer-checklist", "rag"),  # criteria
    ("rag-faithfulness", "rag"),  # prebuilt
]
SAMPLES = 5


def require_llama() -> None:
    """Missing packages skip on a developer's machine and fail in CI, where they must be there."""
    problem = None
    if not server_installed():
        problem = "llama-cpp-python[server] is not installed"
    else:
        try:
            demo_model_path()
        except JudgeError as exc:
            problem = str(exc)
    if problem is None:
        return
    message = f"{problem}: pip install 'grader-studio[local]' (.ci/run installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def serve(tmp: Path, name: str, logprobs: bool) -> Iterator[LocalJudgeServer]:
    require_llama()
    server = LocalJudgeServer(name=name, logprobs=logprobs, log=tmp / f"{name}.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalJudgeServer]:
    yield from serve(tmp_path_factory.mktemp("llama"), "local", logprobs=True)


@pytest.fixture(scope="module")
def llama_without_logprobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalJudgeServer]:
    yield from serve(tmp_path_factory.mktemp("llama-nolp"), "local-nolp", logprobs=False)


@pytest.fixture
def demo_library(library: Library) -> Library:
    build_demo(library)
    return library


def check_rows(rows: list[dict]) -> None:
    assert len(rows) == SAMPLES
    for row in rows:
        assert row["status"] in ("ok", "skipped", "invalid", "error"), row
        if row["status"] == "error":
            assert "timed out" not in row["error"], row["error"]
            assert "HTTP" not in row["error"], row["error"]
            answers = [c.get("response") for c in row["details"].get("calls", [])]
            assert any(isinstance(a, str) for a in answers), row  # the raw answer is kept


def test_every_judge_kind_completes_over_demo_samples(demo_library, llama, capsys) -> None:
    info = llama.register(EndpointRepository.of(demo_library).save)
    assert info.endpoint.supports_logprobs is True and info.endpoint.max_concurrency == 1
    latencies: list[float] = []
    tokens: list[int] = []
    for grader, dataset in KINDS:
        run = run_grader(
            demo_library, grader, dataset, RunOptions(limit=SAMPLES, endpoint="local", use_cache=False)
        )
        assert run.status == "completed", (grader, run.status)
        rows = demo_library.runs.results(run.id)
        check_rows(rows)
        for row in rows:
            for call in row["details"].get("calls", []):
                if "latency_ms" in call:
                    latencies.append(call["latency_ms"])
                    tokens.append(call["completion_tokens"])
            if grader == "answer-quality-1to5" and row["status"] == "ok":
                assert row["details"]["method"] == "logprobs"
                assert sum(row["details"]["probabilities"].values()) == pytest.approx(1.0)
    with capsys.disabled():  # the README's cost per call comes from this line
        print(
            f"\nlocal demo judge on {os.cpu_count()} cores: {len(latencies)} calls, median "
            f"{statistics.median(latencies):.0f} ms, p90 "
            f"{statistics.quantiles(latencies, n=10)[-1]:.0f} ms, median "
            f"{statistics.median(tokens):.0f} completion tokens"
        )


def test_range_judge_samples_when_the_server_has_no_logprobs(
    demo_library, llama_without_logprobs
) -> None:
    # registered without a probe: the first logprobs request is refused and the judge falls back
    EndpointRepository.of(demo_library).save(llama_without_logprobs.endpoint())
    run = run_grader(
        demo_library,
        "answer-quality-1to5",
        "qa",
        RunOptions(limit=SAMPLES, endpoint="local-nolp", use_cache=False),
    )
    rows = demo_library.runs.results(run.id)
    check_rows(rows)
    assert any(row["status"] == "ok" for row in rows)
    for row in rows:
        if row["status"] == "ok":
            assert row["details"]["method"] in ("sampled", "parsed")
        assert not any(c.get("failed") for c in row["details"].get("calls", []))


def test_endpoints_test_reports_the_servers_capabilities(cli, library, llama) -> None:
    added = cli(
        "endpoints", "add", "probe-me", "--base-url", llama.base_url, "--model", "local",
        "--max-concurrency", "8",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    done = cli("endpoints", "test", "probe-me", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["logprobs"] is True
    assert report["structured_output"] == "json_object_schema"
    assert report["local"] is True and report["slots"] == 1
    assert report["server"] == "llama-cpp-python"
    assert any("concurrency set to 1" in line for line in report["changes"])
    config = EndpointRepository.of(library).get("probe-me")
    assert config.max_concurrency == 1 and config.supports_logprobs is True


def test_the_local_server_works_as_a_model_under_test(demo_library, llama) -> None:
    """``generate --endpoint local``: the llama.cpp server answers the demo questions (a 135M model's
    answers are noise; what counts is that every call is answered, bounded, and stored with its
    provenance), then a judge grades what it said."""
    from studio.core.engine.generate import GenerationSettings, generate

    llama.register(EndpointRepository.of(demo_library).save)
    result = generate(demo_library, "qa-local", GenerationSettings(source="qa", endpoint="local", limit=SAMPLES,
                                                                     max_tokens=48))
    assert (result.status, result.stored) == ("complete", SAMPLES), result.errors
    samples = demo_library.datasets.samples("qa-local")
    assert all(isinstance(s.completion, str) for s in samples)
    assert all(s.metadata["generation"]["completion_tokens"] <= 48 for s in samples)
    provenance = demo_library.datasets.get("qa-local").provenance
    assert provenance["endpoint"] == "local" and provenance["parameters"]["max_tokens"] == 48
    run = run_grader(demo_library, "qa-contains-expected", "qa-local", RunOptions())
    assert run.total == SAMPLES
