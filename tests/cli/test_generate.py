"""``grader-studio generate`` through real processes against the scripted model under test on a
real 127.0.0.1 server: provenance, a SIGKILL mid-way then --resume with no answered call made twice
(the server counts them), --max-cost stopping within the calls in flight, the dry run's range,
several answers a sample, and refusals as one sentence."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from no_bwrap import path_without_bwrap

from studio.core.datasets import read_dataset
from studio.core.demo import fake_model, model_endpoint_config
from studio.core.demo.fake_http import Reply
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import BuiltinGrader, FunctionGrader
from studio.core.models import files as definition_files
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.spend import format_usd
from studio.core.paths import demo_dir
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

REPO = Path(__file__).resolve().parents[2]

QA = demo_dir() / "datasets" / "qa.jsonl"


class HeldServer(FakeJudgeServer):
    """Answers ``answer_first`` requests, then holds every further one until released; a held
    request is then refused with a 503 (never answered), so only answers a client received count."""

    def __init__(self, answer_first: int, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.answer_first = answer_first
        self.released = False
        self.held = 0
        self._admitted = 0

    async def dispatch(self, method: str, target: str, headers: dict[str, str], raw: bytes | None) -> Reply:
        if method == "POST":
            with self._lock:
                admitted = self._admitted < self.answer_first or self.released
                self._admitted += 1
            if not admitted:
                with self._lock:
                    self.held += 1
                while not self.released:
                    await asyncio.sleep(0.01)
                return Reply(503, b'{"error": "held"}')
        return await super().dispatch(method, target, headers, raw)


def _setup(db_path: Path, server: FakeJudgeServer, *, priced: bool = False, concurrency: int = 4) -> None:
    with Library.open(db_path) as lib:
        parsed = read_dataset(QA)
        lib.datasets.create("qa", parsed.samples, format=parsed.format, source=QA.name)
        for name, model in (("model-a", "scripted-model-a"), ("model-b", "scripted-model-b")):
            config = model_endpoint_config(name, model, server.port).model_copy(
                update={"max_concurrency": concurrency, "retry_backoff": 0.01, "max_retries": 0})
            if priced:
                config = EndpointConfig.model_validate(
                    {**config.model_dump(), "price_input": "0.15", "price_output": "0.60"})
            EndpointRepository.of(lib).save(config)


@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    srv = FakeJudgeServer(latency_ms=5).start()
    yield srv
    srv.stop()


def test_generate_stores_answers_with_provenance(cli, db_path: Path, server: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    _setup(db_path, server)
    done = cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a", "--temperature", "0.2",
               "--max-tokens", "64", "--concurrency", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["stored"], result["calls"]) == ("complete", 60, 60)
    assert server.usage_sent["calls"] == 60 and sorted(set(server.generated.values())) == [1]
    assert server.max_in_flight <= 2  # --concurrency, within the endpoint's 4

    shown = json.loads(cli("datasets", "show", "qa-a", "--limit", "60", "--json").stdout)
    provenance = shown["dataset"]["provenance"]
    assert provenance["source_dataset"] == "qa" and provenance["endpoint"] == "model-a"
    assert provenance["model"] == "scripted-model-a" and provenance["status"] == "complete"
    assert provenance["parameters"]["temperature"] == 0.2 and provenance["parameters"]["max_tokens"] == 64
    assert provenance["prompt_tokens"] == server.usage_sent["prompt_tokens"]
    assert provenance["completion_tokens"] == server.usage_sent["completion_tokens"]
    assert provenance["started_at"] and provenance["finished_at"]
    samples = shown["samples"]
    source = [s for s in read_dataset(QA).samples]
    assert [s["id"] for s in samples] == [s.id for s in source]  # the source's order, whatever arrived first
    for stored, original in zip(samples, source, strict=True):
        messages = [{"role": m.role, "content": m.content} for m in original.messages]
        assert stored["completion"] == fake_model.answer(messages, "scripted-model-a")
        assert stored["expected"] == original.expected
    shown_text = cli("datasets", "show", "qa-a", "--limit", "1").stdout
    assert "generated from qa by endpoint model-a (model scripted-model-a): complete, 60 calls" in shown_text
    # the sent request is what the options say: the sample's turns, the temperature, the bound
    body = json.loads(next(iter(server.generated)))
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64 and body["model"] == "scripted-model-a"


def test_kill_then_resume_makes_no_answered_call_twice(db_path: Path) -> None:
    server = HeldServer(answer_first=23, latency_ms=5).start()
    try:
        _setup(db_path, server)
        env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
        child = subprocess.Popen([sys.executable, "-m", "studio", "generate", "qa", "--endpoint", "model-a",
                                  "--name", "qa-a"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        stored = -1
        while time.monotonic() < deadline:  # every answer the server gave is in the file, the rest held
            answered = sum(server.generated.values())
            if answered >= 23 and server.held >= 1:
                with sqlite3.connect(db_path) as con:
                    row = con.execute("SELECT sample_count FROM datasets WHERE name = 'qa-a'").fetchone()
                stored = row[0] if row else -1
                if stored == answered:
                    break
            time.sleep(0.02)
        assert stored == 23, f"stored {stored}, answered {sum(server.generated.values())}"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        server.released = True

        resumed = subprocess.run([sys.executable, "-m", "studio", "generate", "qa", "--name", "qa-a", "--resume",
                                  "--json"], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        result = json.loads(resumed.stdout)
        assert (result["status"], result["stored"], result["generated"]) == ("complete", 60, 37)
        assert sum(server.generated.values()) == 60 and max(server.generated.values()) == 1
        with Library.open(db_path) as lib:
            ids = [s.id for s in lib.datasets.samples("qa-a")]
            assert ids == [s.id for s in read_dataset(QA).samples]
            assert lib.datasets.get("qa-a").provenance["calls"] == 60  # both sessions' calls
    finally:
        server.released = True
        server.stop()


def test_max_cost_stops_within_the_calls_in_flight(cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    concurrency = 3
    server = FakeJudgeServer(latency_ms=20).start()
    try:
        _setup(db_path, server, priced=True, concurrency=concurrency)
        cap = Fraction(1, 10_000)  # $0.0001: a few dozen of the calls' worth
        done = cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a", "--max-cost", "0.0001", "--json")
        assert done.returncode == 1, done.stderr
        result = json.loads(done.stdout)
        assert result["status"] == "stopped" and "--max-cost" in result["reason"]
        sent = server.usage_sent
        assert result["calls"] == sent["calls"] == result["stored"] < 60  # every paid answer kept
        spent = Fraction(result["cost_usd"])
        assert spent >= cap
        # what each call cost, from the answers themselves: past the cap only by calls in flight
        with Library.open(db_path) as lib:
            costs = sorted(((Fraction(s.metadata["generation"]["prompt_tokens"]) * Fraction(3, 20)
                             + Fraction(s.metadata["generation"]["completion_tokens"]) * Fraction(3, 5)) / 1_000_000
                            for s in lib.datasets.samples("qa-a")), reverse=True)
        assert spent - sum(costs[:concurrency]) < cap
    finally:
        server.stop()


def test_dry_run_counts_calls_and_brackets_the_cost(cli, db_path: Path, server: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    _setup(db_path, server, priced=True)
    dry = cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a", "--limit", "20", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    estimate = json.loads(dry.stdout)
    assert estimate["calls"] == 20 and server.usage_sent["calls"] == 0  # nothing was called
    real = json.loads(cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a", "--limit", "20",
                          "--json").stdout)
    assert real["calls"] == 20
    low, high = Fraction(estimate["cost_usd"]["low"]), Fraction(estimate["cost_usd"]["high"])
    assert low <= Fraction(real["cost_usd"]) <= high
    again = json.loads(cli("generate", "qa", "--name", "qa-a", "--resume", "--dry-run", "--json").stdout)
    assert (again["calls"], again["already_stored"]) == (0, 20)


def test_several_answers_a_sample(cli, db_path: Path, server: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    _setup(db_path, server)
    done = cli("generate", "qa", "--endpoint", "model-b", "--name", "qa-b3", "--samples", "3", "--limit", "10",
               "--json")
    assert done.returncode == 0, done.stderr
    with Library.open(db_path) as lib:
        samples = lib.datasets.samples("qa-b3")
    assert len(samples) == 30
    assert [s.id for s in samples[:3]] == ["qa-001#1", "qa-001#2", "qa-001#3"]
    assert [s.metadata["generation"]["repeat"] for s in samples[:3]] == [0, 1, 2]
    seeds = {json.loads(body).get("seed") for body in server.generated}
    assert seeds == {0, 1, 2}  # each repeat its own request, so none is a cached copy of another


def test_refusals_are_one_sentence(cli, db_path: Path, server: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    _setup(db_path, server)
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(model_endpoint_config("down", "scripted-model-a", port))
    assert cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a").returncode == 0
    cases = [
        (("generate", "qa", "--endpoint", "down", "--name", "z"), "is unreachable: connection refused"),
        (("generate", "nope", "--endpoint", "model-a", "--name", "x"), "no dataset named 'nope'"),
        (("generate", "qa", "--endpoint", "nope", "--name", "x"), "no endpoint named 'nope'"),
        (("generate", "qa", "--endpoint", "model-a", "--name", "qa-a"), "already exists"),
        (("generate", "qa", "--endpoint", "model-b", "--name", "qa-a", "--resume"), "other endpoint"),
        (("generate", "qa", "--name", "qa", "--resume"), "was not made by `generate`"),
        (("generate", "qa", "--endpoint", "model-a", "--name", "y", "--max-cost", "1"), "needs prices"),
        (("generate", "qa", "--endpoint", "model-a", "--name", "y", "--samples", "0"), "--samples"),
    ]
    for args, message in cases:
        done = cli(*args)
        assert done.returncode == 2, (args, done.stdout)
        assert message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    names = json.loads(cli("datasets", "list", "--json").stdout)
    assert {d["name"] for d in names} == {"qa", "qa-a"}  # nothing refused left a dataset behind


def test_generate_with_prints_the_generation_s_cost_beside_the_judging_s(  # type: ignore[no-untyped-def]
        cli, db_path: Path, server: FakeJudgeServer) -> None:
    _setup(db_path, server, priced=True)
    with Library.open(db_path) as lib:
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    done = cli("run", "exact", "qa", "--generate-with", "model-a", "--limit", "3")
    assert done.returncode in (0, 1), done.stderr  # (the verdict is the run's; the line is what counts)
    assert "generation complete: 3/3 answers in 'qa-model-a'" in done.stderr
    out = done.stdout.strip().splitlines()
    assert out[0].startswith("run 1: completed") and "on qa-model-a" in out[0]
    with Library.open(db_path) as lib:
        generated = lib.datasets.get("qa-model-a").provenance or {}
    cost = format_usd(Fraction(str(generated["cost_usd"])))
    # last, after the run's summary: the generation's cost, the judges' (an exact match calls none), the sum
    assert out[-1] == f"cost: generation {cost} (3 calls to model-a) + judging $0.00 = {cost}"


def test_generate_with_is_refused_by_the_sandbox_before_anything_is_generated(  # type: ignore[no-untyped-def]
        cli, db_path: Path, server: FakeJudgeServer, tmp_path: Path) -> None:
    """Grader code without bubblewrap (and without --allow-unsandboxed) is refused before the
    generation spends a call, not once the outputs it would grade were paid for."""
    _setup(db_path, server)
    with Library.open(db_path) as lib:
        lib.graders.create(FunctionGrader(key="fn", source="async def grade(thread):\n    return 1.0\n"))
    done = cli("run", "fn", "qa", "--generate-with", "model-a", "--limit", "3",
               env={"PATH": path_without_bwrap(tmp_path)})
    assert done.returncode == 2, done.stderr
    assert "bubblewrap is not available" in done.stderr and "Traceback" not in done.stderr
    assert server.usage_sent["calls"] == 0 and "generation" not in done.stderr
    names = {d["name"] for d in json.loads(cli("datasets", "list", "--json").stdout)}
    assert names == {"qa"} and json.loads(cli("runs", "list", "--json").stdout) == []


def test_export_of_a_generated_dataset_names_its_model(cli, db_path: Path, server: FakeJudgeServer,  # type: ignore[no-untyped-def]
                                                        tmp_path: Path) -> None:
    import ast

    _setup(db_path, server)
    with Library.open(db_path) as lib:
        lib.graders.create(definition_files.load(demo_dir() / "graders" / "qa-contains-expected.grader.yaml"))
    assert cli("generate", "qa", "--endpoint", "model-a", "--name", "qa-a", "--limit", "5",
               "--system", "Answer in one word.", "--temperature", "0.3").returncode == 0
    done = cli("export", "qa-contains-expected", "--to", "promptfoo", "--dataset", "qa-a", "-o", str(tmp_path / "pf"))
    # written; promptfoo's contains has other empty-text rules, so the options do not come back (exit 3)
    assert done.returncode == 3 and "not carried: qa-contains-expected: options" in done.stderr, done.stderr
    config = (tmp_path / "pf" / "promptfooconfig.yaml").read_text()
    assert "id: openai:chat:scripted-model-a" in config and "label: model-a" in config
    assert f"apiBaseUrl: {server.base_url}" in config and "temperature: 0.3" in config
    assert "echo" not in config and "Answer in one word." in config  # the chat as the studio sent it
    done = cli("export", "qa-contains-expected", "--to", "inspect", "--dataset", "qa-a", "-o", str(tmp_path / "in"))
    assert done.returncode == 0, done.stderr
    task = (tmp_path / "in" / "qa_a_task.py").read_text()
    ast.parse(task)
    assert "MODEL = 'openai-api/model-a/scripted-model-a'" in task and f"BASE_URL = {server.base_url!r}" in task
    rows = [json.loads(line) for line in (tmp_path / "in" / "qa_a_dataset.jsonl").read_text().splitlines()]
    assert rows[0]["messages"][0] == {"role": "system", "content": "Answer in one word."}
    # an imported dataset still replays its stored completions
    plain = cli("export", "qa-contains-expected", "--to", "promptfoo", "--dataset", "qa", "-o", str(tmp_path / "plain"))
    assert plain.returncode == 3 and "echo" in (tmp_path / "plain" / "promptfooconfig.yaml").read_text()


def test_a_server_with_llama_cpp_habits_is_a_model_under_test(db_path: Path) -> None:
    """llama-cpp-python's ways (one request at a time, a 500 for fields it refuses, generating to the
    context's end without max_tokens): every call goes out bounded and is answered."""
    from studio.core.demo.fake_local import LocalServerHabits
    from studio.core.engine.generate import GenerationSettings, generate

    habits = LocalServerHabits(logprobs=False, structured="json_object_schema", slots=1, unbounded_seconds=60.0)
    server = FakeJudgeServer(habits=habits, model_under_test=True).start()
    try:
        with Library.open(db_path) as lib:
            parsed = read_dataset(QA)
            lib.datasets.create("qa", parsed.samples, format=parsed.format)
            EndpointRepository.of(lib).save(EndpointConfig(name="local", base_url=server.base_url, model="local",
                                                           max_concurrency=1, timeout=30.0))
            result = generate(lib, "qa-local", GenerationSettings(source="qa", endpoint="local", limit=8, samples=2))
            assert (result.status, result.stored) == ("complete", 16), result.errors
            bodies = [json.loads(b) for b in server.generated]
            assert len(bodies) == 16 and all(b["max_tokens"] for b in bodies)  # never unbounded
            assert server.max_in_flight == 1
    finally:
        server.stop()


def test_ctrl_c_keeps_what_was_generated(db_path: Path) -> None:
    server = HeldServer(answer_first=11, latency_ms=5).start()
    try:
        _setup(db_path, server)
        env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
        child = subprocess.Popen([sys.executable, "-m", "studio", "generate", "qa", "--endpoint", "model-a",
                                  "--name", "qa-a", "--json"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (sum(server.generated.values()) >= 11 and server.held >= 1):
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        said = ""
        while "cancelling" not in said:  # the held calls are refused only once the cancel is taken
            said = child.stderr.readline()  # type: ignore[union-attr]
            assert said, "the child ended without taking the Ctrl+C"
        server.released = True
        out, err = child.communicate(timeout=60)
        assert child.returncode == 130, err
        result = json.loads(out)
        assert result["status"] == "cancelled" and result["stored"] == 11 and "--resume" in result["reason"]
        assert "Traceback" not in err
        with Library.open(db_path) as lib:
            record = lib.datasets.get("qa-a")
            assert record.sample_count == 11 and record.provenance["status"] == "cancelled"
    finally:
        server.released = True
        server.stop()


def test_an_imported_replacement_drops_the_provenance(db_path: Path, server: FakeJudgeServer) -> None:
    from studio.core.engine.generate import GenerationSettings, generate

    _setup(db_path, server)
    with Library.open(db_path) as lib:
        generate(lib, "qa-a", GenerationSettings(source="qa", endpoint="model-a", limit=3))
        assert lib.datasets.get("qa-a").provenance["status"] == "complete"
        lib.datasets.create("qa-a", read_dataset(QA).samples[:2], replace=True)
        assert lib.datasets.get("qa-a").provenance is None  # its completions are no longer generated


def test_resume_after_the_endpoint_moved_asks_only_what_is_missing(db_path: Path, server: FakeJudgeServer) -> None:
    """A local server restarted on another port is the same model under test: its stored answers are
    not asked for again (the request is named by the endpoint, not its address)."""
    import threading

    from studio.core.engine.generate import GenerationSettings, generate

    _setup(db_path, server, concurrency=1)
    moved = FakeJudgeServer().start()
    try:
        with Library.open(db_path) as lib:
            cancel = threading.Event()
            first = generate(lib, "qa-a", GenerationSettings(source="qa", endpoint="model-a", limit=10),
                             cancel=cancel, on_progress=lambda p: p.stored >= 4 and cancel.set())
            assert first.status == "cancelled" and first.stored == 4
            repo = EndpointRepository.of(lib)
            repo.save(repo.get("model-a").model_copy(update={"base_url": moved.base_url}))
            done = generate(lib, "qa-a", None, resume=True)
            assert (done.status, done.stored, done.generated) == ("complete", 10, 6)
        asked = {json.loads(b)["messages"][-1]["content"] for b in moved.generated}
        answered_before = {json.loads(b)["messages"][-1]["content"] for b in server.generated}
        assert len(asked) == 6 and not asked & answered_before
    finally:
        moved.stop()


def test_a_killed_generation_s_provenance_says_how_far_it_got(db_path: Path) -> None:
    """What a kill leaves: the answers and the provenance written with them (running, stored, calls)."""
    server = HeldServer(answer_first=9, latency_ms=5).start()
    try:
        _setup(db_path, server)
        env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
        child = subprocess.Popen([sys.executable, "-m", "studio", "generate", "qa", "--endpoint", "model-a",
                                  "--name", "qa-a"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        provenance: dict = {}
        while time.monotonic() < deadline and provenance.get("stored") != 9:
            with sqlite3.connect(db_path) as con:
                row = con.execute("SELECT provenance FROM datasets WHERE name = 'qa-a'").fetchone()
            provenance = json.loads(row[0]) if row and row[0] else {}
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert provenance["status"] == "running" and provenance["stored"] == 9 and provenance["calls"] == 9
        assert provenance["prompt_tokens"] > 0
    finally:
        server.released = True
        server.stop()
