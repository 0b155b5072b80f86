"""Judges keep the calls in flight the run asks for: the scripted server counts them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.runner import Progress, RunOptions, run_grader
from studio.core.models import BinaryJudge, RangeJudge
from studio.core.store import Library


@pytest.fixture
def slow_judge() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer(latency_ms=20).start()
    yield server
    server.stop()


@pytest.fixture
def lib(library: Library, slow_judge: FakeJudgeServer) -> Library:
    add_endpoint(library, slow_judge, max_concurrency=12)
    library.datasets.create("qa", [qa(f"s{i}", f"Question {i}?", f"Answer {i}") for i in range(120)])
    return library


def test_a_two_call_judge_keeps_the_asked_concurrency(lib: Library, slow_judge: FakeJudgeServer) -> None:
    # a range judge makes two calls per sample, one after the other: batching by time used to
    # leave most of the allowed calls unused
    lib.graders.create(RangeJudge(key="range", criteria="How good?", endpoint="fake"))
    reported: list[int] = []

    def watch(progress: Progress) -> None:
        if progress.in_flight is not None:
            reported.append(progress.in_flight)

    run = run_grader(lib, "range", "qa", RunOptions(concurrency=8, use_cache=False), on_progress=watch)
    assert run.counts == {"ok": 120}
    assert slow_judge.requests["/v1/chat/completions"] >= 240  # two a sample (and a retry if the box is slow)
    assert slow_judge.max_in_flight == 8
    assert reported and max(reported) <= 8 and any(n > 0 for n in reported)


def test_the_endpoint_limit_bounds_a_larger_concurrency(lib: Library, slow_judge: FakeJudgeServer) -> None:
    lib.graders.create(BinaryJudge(key="binary", criteria="Is it right?", endpoint="fake"))
    run = run_grader(lib, "binary", "qa", RunOptions(concurrency=64, use_cache=False))
    assert run.counts == {"ok": 120}
    assert slow_judge.max_in_flight == 12  # the endpoint's max_concurrency, not the 64 asked for


def test_the_progress_stream_reports_calls_in_flight(lib: Library, db_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from studio.cli import main

    lib.graders.create(BinaryJudge(key="binary", criteria="Is it right?", endpoint="fake"))
    assert main(["--db", str(db_path), "run", "binary", "qa", "--concurrency", "6", "--no-cache",
                 "--progress-jsonl"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    progress = [e for e in events if e.get("event") == "progress" and not e["finished"]]
    assert progress and all(0 <= e["in_flight"] <= 6 for e in progress)


def test_a_cancel_sends_no_call_that_was_only_queued(library: Library) -> None:
    """At concurrency 1 every other sample's call waits for the one slot; a cancel lets the call in
    flight finish (its answer is paid for and stored) and sends none of the queued ones (they went
    out one by one for the engine's 2 s grace: "Cancel run and quit" took 5 s)."""
    import threading

    server = FakeJudgeServer(latency_ms=250).start()
    try:
        add_endpoint(library, server, max_concurrency=1)
        library.datasets.create("qa", [qa(f"s{i}", f"Question {i}?", f"Answer {i}") for i in range(60)])
        library.graders.create(BinaryJudge(key="binary", criteria="Is it right?", endpoint="fake"))
        cancel = threading.Event()
        at_cancel: list[int] = []

        def stop_after_first(progress: Progress) -> None:
            if progress.done and not cancel.is_set():
                at_cancel.append(progress.done)
                cancel.set()

        run = run_grader(library, "binary", "qa", RunOptions(concurrency=1, use_cache=False),
                         on_progress=stop_after_first, cancel=cancel)
        assert run.status == "cancelled" and at_cancel
        sent = server.requests["/v1/chat/completions"]
        assert sent <= at_cancel[0] + 1  # the answers written, and at most the one call in flight
        assert run.done == sent  # that one's answer is kept
    finally:
        server.stop()
