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


def test_datasets_pair_and_fake_judge_bias_flag(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.cli import build_parser

    for name, answer in (("a", "Paris"), ("b", "Lyon")):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"id": "1", "messages": [{"role": "user", "content": "Capital of France?"}],
                                    "completion": answer, "metadata": {"expected": "Paris"}}) + "\n")
        assert cli("datasets", "import", str(path), "--name", f"model-{name}").returncode == 0
    done = cli("datasets", "pair", "model-a", "model-b", "--name", "pairs", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["paired"] == 1
    done = cli("datasets", "show", "pairs", "--json")
    row = json.loads(done.stdout)
    sample = row[0] if isinstance(row, list) else row["samples"][0]
    assert sample["metadata"]["completion_a"] == "Paris" and sample["metadata"]["completion_b"] == "Lyon"
    done = cli("datasets", "pair", "model-a", "model-a", "--name", "same")
    assert done.returncode == 1 and "itself" in done.stderr
    args = build_parser(["fake-judge", "--bias", "length"]).parse_args(["fake-judge", "--bias", "length"])
    assert args.bias == "length"
