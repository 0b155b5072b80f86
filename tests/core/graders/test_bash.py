"""The bash grader: HUD's exit-code semantics, inside the sandbox's limits."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest

from studio.core.graders.bash import run_bash
from studio.core.models import BashGrader, Sample

SAMPLE = Sample(id="s1", completion='{"name": "Ada"}', expected="Ada")


def bash(command: str, timeout: float = 5.0):  # type: ignore[no-untyped-def]
    return asyncio.run(run_bash(BashGrader(key="b", command=command, timeout_seconds=timeout), SAMPLE))


def test_exit_code_scores_and_sample_reaches_the_command() -> None:
    ok = bash('test "$EXPECTED" = Ada && echo "$ANSWER" | grep -q Ada')
    assert ok.score == 1.0 and ok.status == "ok" and ok.details["exit_code"] == 0
    failed = bash("echo nope >&2; exit 3")
    assert failed.score == 0.0 and failed.details["exit_code"] == 3 and "nope" in (failed.rationale or "")
    stdin = bash('python3 -c "import json,sys; assert json.load(sys.stdin)[\'id\'] == \'s1\'"')
    assert stdin.score == 1.0, stdin.details


def test_timeout_scores_zero_with_metadata() -> None:
    out = bash("sleep 30", timeout=0.5)
    assert out.score == 0.0 and out.details["timed_out"] and out.duration_ms < 10_000


def test_secrets_home_and_network_are_out_of_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-bash")
    leaked = bash('env | grep -q sk-test-secret-bash || cat /proc/1/environ 2>/dev/null | grep -q sk-test')
    assert leaked.score == 0.0
    # the user's own files in the home directory are invisible (the runtime's folder may be mounted)
    visible = [p for p in Path.home().iterdir() if p.name not in (".pyenv", ".cache")][:5]
    for path in visible:
        assert bash(f"test -e '{path}'").score == 0.0, path

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        net = bash(f"exec 3<>/dev/tcp/127.0.0.1/{port}")
    finally:
        stop.set()
        thread.join()
        server.close()
    assert net.score == 0.0 and accepted == []


def test_writes_outside_its_tmp_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "owned.txt"
    out = bash(f"echo x > {target} || echo x > /usr/owned.txt")
    assert out.score == 0.0 and not target.exists() and not os.path.exists("/usr/owned.txt")
