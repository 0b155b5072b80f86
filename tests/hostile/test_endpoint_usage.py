"""An endpoint that reports impossible token counts (1e19, 1e308, a 4,000-digit integer, Infinity)
fails that sample with a sentence; every other result is kept, and every stored run stays readable,
including one stored before counts were bounded whose tokens overflow SQLite's ``sum``."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator

import pytest
from judge_helpers import qa, served

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.engine.summary import run_aggregates
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository
from studio.core.store.run_graders import STORED_KEY

#: the usage each sample's answer reports, as raw JSON text (Python's json reads Infinity)
USAGE = {
    "fine1": "12",
    "e19": "1e19",
    "e308": "1e308",
    "digits": "9" * 4000,
    "inf": "Infinity",
    "fine2": "7",
}


class Counting(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        marker = next(k for k in USAGE if f"<<{k}>>" in body)
        answer = json.dumps(json.dumps({"reasoning": "ok", "verdict": "PASS"}))
        reply = ('{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": '
                 f'{answer}}}, "finish_reason": "stop"}}], "usage": {{"prompt_tokens": {USAGE[marker]}, '
                 '"completion_tokens": 3}}').encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def counting() -> Iterator[str]:
    with served(Counting) as url:
        yield url


def test_an_impossible_count_fails_its_sample_and_keeps_the_rest(library: Library, counting: str) -> None:
    EndpointRepository.of(library).save(EndpointConfig(name="liar", base_url=counting, model="m",
                                                       retry_backoff=0.01, max_retries=0, timeout=5))
    library.graders.create(BinaryJudge(key="j", criteria="c", endpoint="liar"))
    library.datasets.create("d", [qa(k, f"<<{k}>>", "a") for k in USAGE])
    run = run_grader(library, "j", "d", RunOptions(concurrency=2))
    assert run.status == "completed"
    rows = {r["sample_id"]: r for r in library.runs.results(run.id)}
    assert rows["fine1"]["status"] == rows["fine2"]["status"] == "ok"
    assert rows["fine1"]["prompt_tokens"] == 12 and rows["fine2"]["prompt_tokens"] == 7
    for bad in ("e19", "e308", "digits", "inf"):
        assert rows[bad]["status"] == "error", rows[bad]
        assert "usage.prompt_tokens is" in rows[bad]["error"]
        assert "more tokens than any model's context" in rows[bad]["error"]
    assert "a 4,000-digit number" in rows["digits"]["error"] and "inf" in rows["inf"]["error"]
    assert run_aggregates(library, run.id)["prompt_tokens"] == 19


def test_a_stored_run_whose_tokens_overflow_sum_stays_readable(library: Library, counting: str, cli) -> None:  # type: ignore[no-untyped-def]
    library.graders.create(BinaryJudge(key="j", criteria="c", endpoint="e"))
    library.datasets.create("d", [qa("a", "<<fine1>>", "x"), qa("b", "<<fine2>>", "y")])
    EndpointRepository.of(library).save(EndpointConfig(name="e", base_url=counting, model="m"))
    run = run_grader(library, "j", "d", RunOptions(concurrency=1))
    with library.engine.begin() as conn:  # as an earlier studio stored them: 5e18 each
        conn.exec_driver_sql("UPDATE results SET prompt_tokens = 5000000000000000000,"
                             " details = json_object('endpoint', 'e') WHERE run_id = ?", (run.id,))
        # an earlier studio stored no tally at a run's end: its runs are summed from their rows
        (stored,) = conn.exec_driver_sql("SELECT aggregates FROM runs WHERE id = ?", (run.id,)).one()
        aggregates = json.loads(stored)
        assert aggregates.pop(STORED_KEY, None) is not None  # this studio stores one
        conn.exec_driver_sql("UPDATE runs SET aggregates = ? WHERE id = ?", (json.dumps(aggregates), run.id))
    assert run_aggregates(library, run.id)["prompt_tokens"] == 10**19
    library.engine.dispose()
    for args in (("runs", "show", str(run.id)), ("runs", "report", str(run.id))):
        result = cli(*args)
        assert "overflow" not in result.stdout + result.stderr, result
        assert "Traceback" not in result.stderr, result.stderr
        assert "10,000,000,000,000,000,000" in result.stdout, result.stdout
