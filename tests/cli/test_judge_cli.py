"""The CLI faces of the judges: endpoints add/list/test/remove, render, fake-judge."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
from judge_helpers import qa

from studio.cli import main
from studio.core.models import BinaryJudge, RubricJudge


def run(db_path, *args: str) -> int:
    return main(["--db", str(db_path), *args])


def test_endpoints_lifecycle(db_path, fake_judge, capsys) -> None:
    assert (
        run(
            db_path,
            "endpoints",
            "add",
            "local",
            "--base-url",
            fake_judge.base_url,
            "--model",
            "fake-judge",
        )
        == 0
    )
    assert (
        run(db_path, "endpoints", "add", "local", "--base-url", fake_judge.base_url, "--model", "x")
        == 1
    )
    assert "--replace" in capsys.readouterr().err
    assert run(db_path, "endpoints", "add", "bad", "--base-url", "ftp://x", "--model", "m") == 1
    assert "http://" in capsys.readouterr().err

    assert run(db_path, "endpoints", "test", "local", "--json") == 0
    probe = json.loads(capsys.readouterr().out)
    assert probe["logprobs"] is True and probe["latency_ms"] > 0
    assert run(db_path, "endpoints", "list", "--json") == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["name"] == "local" and listed["supports_logprobs"] is True

    assert run(db_path, "endpoints", "list") == 0
    assert "local" in capsys.readouterr().out
    assert run(db_path, "endpoints", "remove", "local") == 0
    assert run(db_path, "endpoints", "remove", "local") == 1
    assert "no endpoint named 'local'" in capsys.readouterr().err


def test_endpoint_test_reports_an_unreachable_server(db_path, capsys) -> None:
    run(
        db_path,
        "endpoints",
        "add",
        "down",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--timeout",
        "1",
    )
    assert run(db_path, "endpoints", "test", "down") == 1
    said = capsys.readouterr().err
    assert "cannot connect to 127.0.0.1:9: connection refused (is the server running" in said
    assert "Errno" not in said and "route: direct connection (no proxy)" in said


def test_render_prints_the_exact_prompt(library, db_path, capsys) -> None:
    library.graders.create(BinaryJudge(key="capital", criteria="Names the right capital."))
    library.graders.create(RubricJudge(key="letta", prompt="Rate {submission} vs {nope}"))
    library.datasets.create(
        "geo",
        [qa("s0", "Capital of France?", "Paris", "Paris"), qa("s1", "Capital of Peru?", "Lima")],
    )
    assert run(db_path, "render", "capital", "--sample", "1") == 0
    out = capsys.readouterr().out
    assert (
        "=== call 1/1: verdict ===" in out
        and "Capital of Peru?" in out
        and "Names the right capital." in out
    )
    assert run(db_path, "render", "capital", "--sample", "0", "--dataset", "geo", "--json") == 0
    assert (
        json.loads(capsys.readouterr().out)["calls"][0]["messages"][1]["content"].count("Paris")
        == 2
    )
    assert run(db_path, "render", "letta", "--sample", "0") == 1
    assert "'nope'" in capsys.readouterr().err


def test_fake_judge_command_serves_until_stopped(tmp_path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "studio",
            "--db",
            str(tmp_path / "x.sqlite"),
            "fake-judge",
            "--port",
            "0",
            "--latency-ms",
            "5",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert "scripted judge, not a model" in line
        base = line.strip().rsplit(" ", 1)[-1]
        models = httpx.get(f"{base}/models", timeout=5).json()
        assert models["data"][0]["id"] == "fake-judge"
        assert "not a model" in models["data"][0]["owned_by"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
