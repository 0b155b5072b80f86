"""A judge endpoint that redirects, or that is down: the user reads what happened in one sentence.

A 30x is reported as a redirect to its Location and is never followed (the prompt and the API key
would go to an address the user never named). An endpoint nothing listens on is found before the run
is recorded: exit 2, one sentence naming the endpoint and the error, no run row.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from judge_helpers import served

from studio.core.judges.http.chat import ChatRequest, user
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.errors import EndpointCallError
from studio.core.models import BinaryJudge
from studio.core.models import files as definition_files
from studio.core.models.endpoints import EndpointConfig

ELSEWHERE = "http://elsewhere.example/v1/chat/completions"


class Redirecting(http.server.BaseHTTPRequestHandler):
    hits = 0

    def _redirect(self) -> None:
        Redirecting.hits += 1
        self.send_response(307)
        self.send_header("Location", ELSEWHERE)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET = _redirect  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def redirecting() -> Iterator[str]:
    Redirecting.hits = 0
    with served(Redirecting) as url:
        yield url


def test_a_redirect_is_named_and_not_followed(redirecting: str) -> None:
    config = EndpointConfig(name="moved", base_url=redirecting, model="m", retry_backoff=0.01, max_retries=3)

    async def ask() -> None:
        client = JudgeClient(config)
        try:
            await client.chat(ChatRequest(messages=[user("hi")]))
        finally:
            await client.aclose()

    with pytest.raises(EndpointCallError) as caught:
        asyncio.run(ask())
    message = str(caught.value)
    assert "HTTP 307" in message and f"redirect to {ELSEWHERE}" in message
    assert "does not follow redirects" in message and "malformed" not in message
    assert Redirecting.hits == 1  # not retried, not followed


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_a_run_on_an_endpoint_that_is_down_is_refused_before_it_is_recorded(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"input": f"q{i}", "completion": "a"}) + "\n" for i in range(20)))
    assert cli("datasets", "import", str(data), "--name", "d").returncode == 0
    port = _closed_port()
    assert cli("endpoints", "add", "down", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m").returncode == 0
    path = definition_files.save(BinaryJudge(key="judge", criteria="Right?", endpoint="down"),
                                 tmp_path / "judge.grader.yaml")
    assert cli("graders", "create", str(path)).returncode == 0
    for extra in ((), ("--json",), ("--endpoint", "down"), ("--progress-jsonl",)):
        result = cli("run", "judge", "d", *extra)
        assert result.returncode == 2, (extra, result)
        assert "Traceback" not in result.stderr
        text = result.stderr + result.stdout
        assert "'down'" in text and f"127.0.0.1:{port}" in text and "connection refused" in text, text
        assert "20/20" not in text and "stopped after" not in text and "grader" not in result.stderr
    lines = [line for line in cli("run", "judge", "d").stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines  # one sentence
    assert json.loads(cli("runs", "list", "--json").stdout) == []

    assert cli("endpoints", "add", "nowhere", "--base-url", "http://no-such-host.invalid/v1",
               "--model", "m").returncode == 0
    result = cli("run", "judge", "d", "--endpoint", "nowhere")
    assert result.returncode == 2 and "'nowhere'" in result.stderr and "cannot resolve" in result.stderr
    assert json.loads(cli("runs", "list", "--json").stdout) == []
