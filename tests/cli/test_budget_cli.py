"""Tokens and money, through real processes against the scripted judge (whose replies carry usage,
cached tokens included): stored usage equals what the server reported, cost is exact, the dry run
counts the calls exactly and the tokens within 10%, and a --max-cost run stops within one
concurrency window of its cap and resumes to the scores of an uncapped run."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.usage import exact_decimal
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

PRICE_IN, PRICE_OUT = Fraction("0.15"), Fraction("0.60")
CONCURRENCY = 2


@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    srv = FakeJudgeServer(latency_ms=20).start()  # answers take a moment: calls really overlap
    yield srv
    srv.stop()


@pytest.fixture
def priced(db_path: Path, server: FakeJudgeServer) -> FakeJudgeServer:
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(
            name="openai-like", base_url=server.base_url, model="gpt-4o-mini", retry_backoff=0.01,
            timeout=5.0, price_input="0.15", price_output="0.60"))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="openai-like"))
        lib.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i}) "
                                                                                          + "Please think. " * (i % 7))],
                                          completion="Paris" if i % 3 else "Lyon", expected="Paris")
                                   for i in range(40)])
    return server


def exact_cost(prompt: int, completion: int) -> str:
    return exact_decimal((prompt * PRICE_IN + completion * PRICE_OUT) / 1_000_000)


def test_usage_totals_and_cost_are_exact(cli, priced: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    done = cli("run", "judge", "qa", "--limit", "15", "--json")
    assert done.returncode == 0, done.stderr
    usage = json.loads(done.stdout)["usage"]
    sent = priced.usage_sent
    total = usage["total"]
    assert {k: total[k] for k in sent} == sent
    assert total["cached_tokens"] > 0  # the repeated system prompt, as the server reported it
    assert total["cost_usd"] == exact_cost(sent["prompt_tokens"], sent["completion_tokens"])
    assert usage["graders"]["judge"] == total == usage["endpoints"]["openai-like"]
    run_id = json.loads(done.stdout)["id"]
    shown = json.loads(cli("runs", "show", str(run_id), "--json").stdout)["run"]["usage"]
    assert shown == usage
    text = cli("runs", "show", str(run_id)).stdout
    assert f"{sent['prompt_tokens']:,} prompt tokens ({sent['cached_tokens']:,} cached)" in text


def test_dry_run_counts_calls_exactly_and_tokens_within_ten_percent(cli, priced: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    dry = cli("run", "judge", "qa", "--limit", "20", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    estimate = json.loads(dry.stdout)["graders"][0]
    assert json.loads(cli("runs", "list", "--json").stdout) == []  # nothing graded, nothing stored
    assert priced.usage_sent["calls"] == 0
    assert estimate["samples"] == 20 and estimate["judge_calls"] == 20 and estimate["cache_hits"] == 0
    assert estimate["endpoints"]["openai-like"]["tokenizer"] == "o200k_base tokenizer"
    assert cli("run", "judge", "qa", "--limit", "20").returncode == 0
    sent = priced.usage_sent
    assert estimate["judge_calls"] == sent["calls"]
    assert abs(estimate["prompt_tokens"] - sent["prompt_tokens"]) <= 0.1 * sent["prompt_tokens"]
    assert estimate["max_completion_tokens"] >= sent["completion_tokens"]
    low, high = Fraction(estimate["cost_usd"]["min"]), Fraction(estimate["cost_usd"]["max"])
    assert low == estimate["prompt_tokens"] * PRICE_IN / 1_000_000
    assert low <= Fraction(exact_cost(sent["prompt_tokens"], sent["completion_tokens"])) <= high
    # the cache now answers those 20; 5 more samples still need calls; repeats bypass the cache
    again = json.loads(cli("run", "judge", "qa", "--limit", "25", "--dry-run", "--json").stdout)["graders"][0]
    assert (again["judge_calls"], again["cache_hits"]) == (5, 20)
    repeated = json.loads(cli("run", "judge", "qa", "--limit", "4", "--dry-run", "--repeat", "3", "--json").stdout)
    assert repeated["graders"][0]["judge_calls"] == 12
    human = cli("run", "judge", "qa", "--limit", "20", "--dry-run").stdout
    assert "0 judge calls" in human and "20 answered by the cache" in human


def stored_scores(db: Path, run_id: int) -> dict[str, float]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT sample_id, score FROM results WHERE run_id = ?", (run_id,)).fetchall())
    finally:
        conn.close()


def per_call_costs(db: Path, run_id: int) -> list[Fraction]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT prompt_tokens, completion_tokens FROM results WHERE run_id = ?", (run_id,))
        return [(p * PRICE_IN + c * PRICE_OUT) / 1_000_000 for p, c in rows]
    finally:
        conn.close()


def test_max_cost_stops_within_one_window_and_resumes_to_the_same_scores(cli, priced: FakeJudgeServer,
                                                                         db_path: Path) -> None:  # type: ignore[no-untyped-def]
    cap = Fraction("0.0004")  # about a dozen of the 40 calls
    capped = cli("run", "judge", "qa", "--max-cost", "0.0004", "--concurrency", str(CONCURRENCY), "--json")
    assert capped.returncode == 2, capped.stderr
    result = json.loads(capped.stdout)
    assert result["status"] == "stopped" and 0 < result["done"] < 40
    assert "budget" in result["verdict"]["reasons"][0]
    assert "stopped: budget" in capped.stderr
    spent = Fraction(result["usage"]["total"]["cost_usd"])
    assert spent == Fraction(exact_cost(priced.usage_sent["prompt_tokens"], priced.usage_sent["completion_tokens"]))
    assert spent >= cap  # it stopped because it got there ...
    window = CONCURRENCY * max(per_call_costs(db_path, result["id"]))
    assert spent - cap <= window  # ... and went past it by at most the calls in flight
    assert result["counts"].get("error", 0) == 0  # the samples it did not reach are not errors

    resumed = cli("run", "--resume", str(result["id"]), "--max-cost", "1", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "completed"
    uncapped = json.loads(cli("run", "judge", "qa", "--no-cache", "--json").stdout)
    assert stored_scores(db_path, result["id"]) == stored_scores(db_path, uncapped["id"])
    assert len(stored_scores(db_path, uncapped["id"])) == 40


def test_a_token_cap_and_a_cost_cap_on_an_unpriced_endpoint(cli, priced: FakeJudgeServer, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    capped = json.loads(cli("run", "judge", "qa", "--max-tokens", "1000", "--concurrency", "1", "--json").stdout)
    assert capped["status"] == "stopped"
    total = capped["usage"]["total"]
    assert 1000 <= total["prompt_tokens"] + total["completion_tokens"] <= 1000 + max(
        p + c for p, c in sqlite3.connect(db_path).execute(
            "SELECT prompt_tokens, completion_tokens FROM results WHERE run_id = ?", (capped["id"],)))
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(name="free", base_url=priced.base_url, model="gpt-4o-mini"))
    refused = cli("run", "judge", "qa", "--endpoint", "free", "--max-cost", "1")
    assert refused.returncode == 2 and "--max-cost needs prices on endpoint free" in refused.stderr
    assert len(json.loads(cli("runs", "list", "--json").stdout)) == 1


def test_a_cap_reached_by_the_last_calls_leaves_the_run_complete(cli, priced: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    # three samples, three calls in flight at once: all admitted, and together they pass the cap
    done = cli("run", "judge", "qa", "--limit", "3", "--concurrency", "3", "--max-tokens", "1", "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert result["status"] == "completed" and result["done"] == 3
    assert result["aggregates"]["budget"]["stopped"] is True and "stopped" not in result["aggregates"]


def test_cached_prompt_tokens_cost_the_cached_price_set_on_the_command_line(cli, priced: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    added = cli("endpoints", "add", "openai-like", "--base-url", priced.base_url, "--model", "gpt-4o-mini",
                "--price-input", "0.15", "--price-output", "0.60", "--price-cached-input", "0.075", "--replace")
    assert added.returncode == 0 and "0.075 cached in" in added.stdout, added.stderr
    done = cli("run", "judge", "qa", "--limit", "10", "--json", "--no-cache")
    assert done.returncode == 0, done.stderr
    total = json.loads(done.stdout)["usage"]["total"]
    sent = priced.usage_sent
    assert sent["cached_tokens"] > 0 and total["cached_tokens"] == sent["cached_tokens"]
    cost = ((sent["prompt_tokens"] - sent["cached_tokens"]) * PRICE_IN + sent["cached_tokens"] * Fraction("0.075")
            + sent["completion_tokens"] * PRICE_OUT) / 1_000_000
    assert total["cost_usd"] == exact_decimal(cost) != exact_cost(sent["prompt_tokens"], sent["completion_tokens"])
    bad = cli("endpoints", "add", "x", "--base-url", priced.base_url, "--model", "m", "--price-input", "1",
              "--price-output", "1", "--price-cached-input", "cheap")
    assert bad.returncode == 2 and "--price-cached-input" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("criterion", [
    {"type": "score_model", "name": "s", "model": "gpt-4o-mini", "range": [0, 1],
     "input": [{"role": "user", "content": "Rate {{sample.output_text}}"}]},
    {"type": "text_similarity", "name": "c", "evaluation_metric": "cosine",
     "input": "{{sample.output_text}}", "reference": "{{item.reference_answer}}"},
    {"type": "multi", "name": "m", "calculate_output": "inner", "graders": {"inner": {
        "type": "label_model", "name": "l", "model": "gpt-4o-mini", "labels": ["good", "bad"],
        "passing_labels": ["good"], "input": [{"role": "user", "content": "{{sample.output_text}}"}]}}},
])
def test_an_openai_graders_model_calls_are_priced_before_a_capped_run(  # type: ignore[no-untyped-def]
        cli, priced: FakeJudgeServer, db_path: Path, criterion: dict[str, object]) -> None:
    """An imported OpenAI criterion that calls a model (score_model, label_model inside a multi, a
    cosine similarity) spends from the same budget as a judge: a cost cap is refused up front when
    its endpoint has no prices, as a judge's is, never a run whose spend cannot be counted."""
    from studio.core.models.openai_grader import OpenAIGrader

    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(name="free", base_url=priced.base_url, model="gpt-4o-mini"))
        lib.graders.create(OpenAIGrader(key="oai", criterion=criterion, endpoint="free"))
    refused = cli("run", "oai", "qa", "--max-cost", "1")
    assert refused.returncode == 2 and "--max-cost needs prices on endpoint free" in refused.stderr, refused.stderr
    assert "qa" not in {row[0] for row in sqlite3.connect(db_path).execute(
        "SELECT d.name FROM runs r JOIN datasets d ON d.id = r.dataset_id")}  # no run was made
