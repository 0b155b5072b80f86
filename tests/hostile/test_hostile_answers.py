"""A judge that answers with NUL, lone surrogates, JSON ten thousand deep and terminal escape
sequences (a real HTTP endpoint on 127.0.0.1), on SQLite and PostgreSQL: no answer fails the run,
each is stored as the boundary makes it (studio/core/outside.py), ``runs show`` prints it with
its controls made visible and ``run --resume`` finishes the run. No traceback anywhere."""

from __future__ import annotations

import http.server
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_text import nested_text
from judge_helpers import cancelled_after, qa, send_json, served

from studio.core.engine.runner import RunOptions, start_run
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

VERDICT = '"verdict": "PASS"'


def _content(reasoning: str) -> str:
    """The answer's text: the judge's JSON with ``reasoning`` (a JSON value as text) in it."""
    return '{"reasoning": ' + reasoning + ", " + VERDICT + "}"


#: each sample's answer: the message content (a Python string, JSON-encoded into the body), or a
#: whole body as raw text ("body:")
ANSWERS: dict[str, str] = {
    "clean1": _content('"fine"'),
    "nul": _content('"before\\u0000after"'),  # a NUL in the judge's JSON
    "nul_raw": "PASS before\x00after",  # a NUL in the message content itself
    "surrogate": _content('"lone \\ud800 high and \\udfff low"'),
    "surrogate_raw": "PASS lone \ud800 in the content",
    "deep_content": _content(nested_text(10_000)),
    "escapes": _content(json.dumps("\x1b]0;owned\x07\x1b[2J\x1b[1A\x9b2J cleared")),
    "deep_body": "body:" + '{"choices": ' + nested_text(10_000) + "}",
    "nan_details": "body:" + '{"choices": [{"index": 0, "message": {"role": "assistant", "content": '
                   + json.dumps(_content('"ok"')) + '}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1},'
                   ' "extra": NaN}',
    "clean2": _content('"fine too"'),
}


class Hostile(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        marker = next(k for k in ANSWERS if f"<<{k}>>" in body)
        answer = ANSWERS[marker]
        # each answer takes longer than the writer's 0.1 s of coalescing, so the run's progress (and
        # its cancel after 3) lands part way: a judge run is fed a sample at a time
        time.sleep(0.3)
        if answer.startswith("body:"):
            reply = answer.removeprefix("body:").encode()
        else:
            reply = json.dumps({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                                        "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": 5, "completion_tokens": 3}}).encode()
        send_json(self, reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[str]:
    with served(Hostile) as url:
        yield url


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def _library(library: Library, url: str) -> None:
    EndpointRepository.of(library).save(EndpointConfig(name="hostile", base_url=url, model="m", retry_backoff=0.01,
                                                       max_retries=0, timeout=10, max_concurrency=1))
    library.graders.create(BinaryJudge(key="j", criteria="c", endpoint="hostile"))
    library.datasets.create("d", [qa(k, f"<<{k}>>", "a") for k in ANSWERS])


def test_hostile_answers_are_stored_shown_and_resumed(library: Library, hostile: str, cli) -> None:  # type: ignore[no-untyped-def]
    _library(library, hostile)
    run = start_run(library, "j", "d", RunOptions(concurrency=1))
    left = cancelled_after(library, run.id, 3)  # a run stopped part way, its hostile rows stored
    assert left.status == "cancelled"
    library.engine.dispose()

    resumed = cli("run", "--resume", str(run.id))
    assert resumed.returncode in (0, 1), resumed.stderr  # 1: a gate on failures, never 70
    assert "Traceback" not in resumed.stderr

    rows = {r["sample_id"]: r for r in library.runs.results(run.id)}
    assert set(rows) == set(ANSWERS)  # every answer stored: none failed the run or its batch
    assert library.runs.get(run.id).status == "completed"
    for sample, row in rows.items():
        for column in ("rationale", "error"):
            value = row[column] or ""
            assert "\x00" not in value, (sample, column)
            value.encode("utf-8")  # no lone surrogate
    assert rows["clean1"]["status"] == rows["clean2"]["status"] == "ok"
    assert rows["nul"]["rationale"] == "before\ufffdafter"
    assert rows["surrogate"]["rationale"] == "lone \ufffd high and \ufffd low"
    assert rows["escapes"]["rationale"].startswith("\x1b]0;owned")  # stored as it came: data
    assert rows["deep_body"]["status"] == "error" and "malformed" in rows["deep_body"]["error"]
    assert rows["nan_details"]["status"] == "ok"

    for args in (("runs", "show", str(run.id)), ("runs", "show", str(run.id), "--json"),
                 ("runs", "report", str(run.id)), ("runs", "export", str(run.id), "--format", "jsonl")):
        shown = cli(*args)
        assert shown.returncode in (0, 1), (args, shown.stderr)
        assert "Traceback" not in shown.stderr, shown.stderr
        for stream in (shown.stdout, shown.stderr):
            assert "\x1b" not in stream and "\x9b" not in stream and "\x07" not in stream, args
    shown = json.loads(cli("runs", "show", str(run.id), "--json").stdout)
    by_id = {r["sample_id"]: r for r in shown["results"]}
    assert by_id["escapes"]["rationale"] == rows["escapes"]["rationale"]  # --json keeps the value exactly
    assert "␛]0;owned" in cli("runs", "show", str(run.id), "--sample", "escapes").stdout


def test_generate_stores_every_hostile_answer(library: Library, hostile: str, cli) -> None:  # type: ignore[no-untyped-def]
    """The model under test answering the same way: every answer that arrived is stored (none lost
    to a later one in its batch), ``datasets show`` prints it with its controls visible."""
    _library(library, hostile)
    library.engine.dispose()
    done = cli("generate", "d", "--endpoint", "hostile", "--name", "out", "--json")
    _no_traceback(done)
    result = json.loads(done.stdout)
    assert result["stored"] == len(ANSWERS) - 1, result  # all but the body nested too deep to decode
    shown = cli("datasets", "show", "out", "--limit", "100", "--json")
    _no_traceback(shown)
    samples = {s["id"].split("#")[0]: s for s in json.loads(shown.stdout)["samples"]}
    completions = {k: v["completion"] for k, v in samples.items()}
    assert any(c == "PASS before\ufffdafter" for c in completions.values()), completions
    assert any(c == "PASS lone \ufffd in the content" for c in completions.values()), completions
    printed = cli("datasets", "show", "out", "--limit", "100")
    _no_traceback(printed)
    assert "\x1b" not in printed.stdout and "\x9b" not in printed.stdout and "\x00" not in printed.stdout


def _no_traceback(result) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr and "hit a bug" not in result.stderr, result.stderr
