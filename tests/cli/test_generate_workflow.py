"""The documented workflow (docs/generate.md) end to end on the demo library, through real processes
against one 127.0.0.1 fake-judge server that is both the scripted judge and the two scripted models
under test: a suite graded over outputs generated in the same command (generation and judging
costs apart, one budget for both), two models compared per grader with ``runs compare``, and the
same two paired for the pairwise judge, which prefers the model that is right more often."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.demo import (
    DEMO_ENDPOINT,
    DEMO_MODELS,
    build_demo,
    fake_model,
    model_endpoint_config,
)
from studio.core.demo.fake_script import contains_reference
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository, demo_endpoint_config

LIMIT = 30  # of the 60 demo questions: enough for the two models to differ


@pytest.fixture
def demo(db_path: Path) -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer(latency_ms=2).start()
    with Library.open(db_path) as lib:
        build_demo(lib)
        repo = EndpointRepository.of(lib)
        # the demo's endpoints, moved to this test's port and priced
        repo.save(EndpointConfig.model_validate({**demo_endpoint_config(DEMO_ENDPOINT, server.port).model_dump(),
                                                 "price_input": "0.10", "price_output": "0.20"}))
        for name, model in DEMO_MODELS.items():
            repo.save(EndpointConfig.model_validate({**model_endpoint_config(name, model, server.port).model_dump(),
                                                     "price_input": "0.15", "price_output": "0.60"}))
    yield server
    server.stop()


def _right(model: str, db_path: Path) -> int:
    """How many of the qa questions the scripted model answers with the reference in its answer."""
    with Library.open(db_path) as lib:
        samples = lib.datasets.samples("qa", limit=LIMIT)
    return sum(contains_reference(fake_model.answer([m.model_dump() for m in s.messages], model), s.expected or "")
               for s in samples)


def test_suite_over_generated_outputs_and_two_models_compared(cli, db_path: Path, demo: FakeJudgeServer,
                                                               tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("suites", "create", "qa-check", "qa-contains-expected", "qa-correctness-judge").returncode == 0
    report = tmp_path / "report.md"
    runs = {}
    for name in DEMO_MODELS:
        done = cli("run", "qa-check", "qa", "--generate-with", name, "--limit", str(LIMIT), "--max-cost", "0.05", "--json",
                   "--markdown", str(report), "--junit", str(tmp_path / f"{name}.xml"))
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        runs[name] = result["id"]
        assert result["dataset"] == f"qa-{name}" and result["generation"]["status"] == "complete"
        assert result["generation"]["provenance"]["endpoint"] == name
        costs = result["cost_usd"]  # apart, and adding up
        assert costs["generation"] == result["generation"]["cost_usd"]
        assert costs["judging"] == result["usage"]["total"]["cost_usd"]
        from fractions import Fraction
        assert Fraction(costs["total"]) == Fraction(costs["generation"]) + Fraction(costs["judging"])
        # one budget: the run was given what the generation left of it
        assert Fraction(result["aggregates"]["budget"]["max_cost"]) == Fraction("0.05") - Fraction(costs["generation"])
        assert "## Outputs generated" in report.read_text() and name in report.read_text()
        junit = (tmp_path / f"{name}.xml").read_text()
        assert f'name="generated_by_endpoint" value="{name}"' in junit
        assert f'name="generation_cost_usd" value="{costs["generation"]}"' in junit
        assert f'name="judging_cost_usd" value="{costs["judging"]}"' in junit
    # the judges' scores follow what the two scripted models really said
    a, b = runs["demo-model-a"], runs["demo-model-b"]
    compared = cli("runs", "compare", str(a), str(b), "--json")
    assert compared.returncode == 0, compared.stderr
    graders = json.loads(compared.stdout)["graders"]
    contains = graders["qa-contains-expected"]
    assert contains["n_common"] == LIMIT
    assert round(contains["mean_a"] * LIMIT) == _right("scripted-model-a", db_path)
    assert round(contains["mean_b"] * LIMIT) == _right("scripted-model-b", db_path)
    assert contains["mean_a"] > contains["mean_b"] and "qa-correctness-judge" in graders

    # side by side for the pairwise judge
    paired = cli("datasets", "pair", "qa-demo-model-a", "qa-demo-model-b", "--name", "qa-a-vs-b", "--json")
    assert paired.returncode == 0, paired.stderr
    assert json.loads(paired.stdout)["paired"] == LIMIT
    judged = cli("run", "pairwise-preference", "qa-a-vs-b", "--json")
    assert judged.returncode == 0, judged.stderr
    pairwise = json.loads(judged.stdout)["aggregates"]["pairwise"]
    assert pairwise["win_a"] > pairwise["win_b"]


def test_generate_with_stops_before_grading_when_the_budget_is_spent(cli, db_path: Path,  # type: ignore[no-untyped-def]
                                                                       demo: FakeJudgeServer) -> None:
    done = cli("run", "qa-contains-expected", "qa", "--generate-with", "demo-model-a", "--max-cost", "0.00001")
    assert done.returncode == 1
    assert "not graded" in done.stderr and "Traceback" not in done.stderr
    runs = json.loads(cli("runs", "list", "--json").stdout)
    assert not [r for r in runs if r["dataset"] == "qa-demo-model-a"]
