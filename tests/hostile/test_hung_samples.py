"""Hung graders cost one timeout each, side by side: a run's first samples go one per worker.

A batch that times out cannot say which of its samples hung, so its samples are graded again one
by one, each hung one costing its own timeout after the batch's. Until the grader's speed is known
the engine gives each sandbox worker one sample at a time: hung samples then start on different
workers, each times out once, alone, while the other workers keep grading. Checked by counting what
the real workers were asked to do (grade calls in flight, the timeouts charged and their samples),
never by the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox import pool as pool_module
from studio.core.sandbox import process
from studio.core.sandbox.pool import close_shared_pool
from studio.core.store import Library

HANG = "    while True:\n        pass\n"
PLAIN = "def grade(thread):\n    if not thread.metadata.get('evil'):\n        return 1.0\n" + HANG
ASYNC = "async def grade(thread):\n    if not thread.metadata.get('evil'):\n        return 1.0\n" + HANG
TIMEOUT = "wall-time limit (1 s) exceeded"


@dataclass
class Calls:
    """What the workers were asked: grade calls in flight at once, and each call that timed out."""

    in_flight: int = 0
    peak: int = 0
    timed_out: list[int] = field(default_factory=list)  # the samples of each call that timed out
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    seen = Calls()
    original = process.WorkerProcess.grade

    def counting(self: process.WorkerProcess, samples: list[Any], **kwargs: Any) -> process.BatchReply:
        with seen.lock:
            seen.in_flight += 1
            seen.peak = max(seen.peak, seen.in_flight)
        try:
            reply = original(self, samples, **kwargs)
        finally:
            with seen.lock:
                seen.in_flight -= 1
        if reply.failure is not None and reply.failure.kind == "timeout":
            with seen.lock:
                seen.timed_out.append(len(samples))
        return reply

    monkeypatch.setattr(process.WorkerProcess, "grade", counting)
    return seen


@pytest.fixture
def three_workers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The run's shared pool as on a machine with three cores (three workers, concurrency three)."""
    monkeypatch.setattr(pool_module, "default_size", lambda: 3)
    close_shared_pool()
    yield
    close_shared_pool()  # the next user gets a pool of this machine's size again


def samples(n: int, evil: set[int]) -> list[Sample]:
    return [Sample(id=f"s{i}", messages=[Turn(role="user", content="2+2?")], completion="4",
                   metadata={"evil": i in evil}) for i in range(n)]


@pytest.mark.parametrize("source", [PLAIN, ASYNC], ids=["def", "async-def"])
def test_three_hung_samples_time_out_together_on_three_workers(library: Library, calls: Calls,
                                                               three_workers: None, source: str) -> None:
    """Once each: three timeouts of one sample, in flight at once (it used to be a batch of all three
    timing out first, then each suspect again: four timeouts, the last ones one after another)."""
    library.graders.create(FunctionGrader(key="hang", source=source, timeout_seconds=1, memory_mb=256))
    library.datasets.create("d", samples(3, evil={0, 1, 2}))
    info = run_grader(library, "hang", "d", RunOptions())
    assert info.status == "completed" and info.counts == {"error": 3}
    assert [r["error"] for r in library.runs.results(info.id)] == [TIMEOUT] * 3
    assert calls.timed_out == [1, 1, 1]
    assert calls.peak == 3


@pytest.mark.parametrize("source", [PLAIN, ASYNC], ids=["def", "async-def"])
def test_a_hung_sample_is_charged_one_timeout_while_the_others_grade(library: Library, calls: Calls,
                                                                     three_workers: None, source: str) -> None:
    """The first sample hangs: its worker times out on it alone, once; every other sample scores."""
    library.graders.create(FunctionGrader(key="hang", source=source, timeout_seconds=1, memory_mb=256))
    library.datasets.create("d", samples(12, evil={0}))
    info = run_grader(library, "hang", "d", RunOptions(concurrency=2))
    assert info.status == "completed" and info.counts == {"ok": 11, "error": 1}
    rows = {r["sample_id"]: r for r in library.runs.results(info.id)}
    assert rows["s0"]["error"] == TIMEOUT
    assert all(rows[f"s{i}"]["score"] == 1.0 for i in range(1, 12))
    assert calls.timed_out == [1]
