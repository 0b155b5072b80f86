"""``grader-studio probe`` and ``run --json`` of a pairwise judge, as a user runs them, on the demo
library against a first-answer-biased scripted judge over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.demo.fake_server import FakeJudgeServer


@pytest.fixture
def biased() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer(bias="first").start()
    yield server
    server.stop()


def test_probe_and_pairwise_run_json(cli, biased: FakeJudgeServer, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo", "--json").returncode == 0
    assert cli("endpoints", "add", "first", "--base-url", biased.base_url, "--model", "fake-judge").returncode == 0
    done = cli("probe", "pairwise-preference", "qa-pairs", "--probe", "position", "--limit", "12",
               "--endpoint", "first", "--json")
    assert done.returncode == 0, done.stderr
    position = json.loads(done.stdout)["probes"]["position"]
    assert position["n"] == 12 and position["position_consistency"] == 0.0
    assert position["first_position_rate"] == 1.0 and position["flag"] is True
    done = cli("run", "pairwise-preference", "qa-pairs", "--endpoint", "first", "--limit", "10", "--json")
    assert done.returncode in (0, 1), done.stderr
    pairwise = json.loads(done.stdout)["pairwise"]
    assert set(pairwise) == {"win_a", "win_b", "tie", "inconsistent", "position_consistency", "first_position_rate"}
    assert all(0.0 <= v <= 1.0 for v in pairwise.values())
    assert pairwise["inconsistent"] == 1.0 and pairwise["position_consistency"] == 0.0


def test_probe_refusals_are_one_sentence(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo", "--json").returncode == 0
    done = cli("probe", "qa-correctness-judge", "qa", "--probe", "position")
    assert done.returncode == 1 and "pairwise judge" in done.stderr and "Traceback" not in done.stderr
    done = cli("probe", "qa-exact-builtin", "qa")
    assert done.returncode == 1 and "LLM judges" in done.stderr
