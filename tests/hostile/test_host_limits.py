"""The host trusts nothing a worker sends: a hostile sample fails alone, inside a real run.

Each grader here attacks the channel or the limits from one sample of a run; the run must finish,
store the honest samples' scores, give the hostile one a clear error and leave a run that resume
can finish. The limits checked are the studio's own (set outside the worker).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from studio.core.engine.runner import RunOptions, execute_run, run_grader, start_run
from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox import process
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.sandbox.session import CPU_GRACE_SECONDS, RECYCLE_CPU_SECONDS
from studio.core.scoring import GradingContext
from studio.core.store import Library

CORPUS = Path(__file__).parent / "corpus"


def make_samples(n: int, evil: int | None = None) -> list[Sample]:
    return [Sample(id="evil" if i == evil else f"s{i}", messages=[Turn(role="user", content="2+2?")],
                   completion="4", expected="4", metadata={"evil": i == evil}) for i in range(n)]


def grade_run(library: Library, source: str, n: int = 10, evil: int | None = 4, timeout: float = 1.0,
              **options: object):
    library.graders.create(FunctionGrader(key="g", source=source, timeout_seconds=timeout, memory_mb=256))
    library.datasets.create("d", make_samples(n, evil))
    return run_grader(library, "g", "d", RunOptions(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize("attack", ["forge_deep_result", "forge_short_entry", "forge_foreign_index",
                                    "keepalive_replies", "forge_float_foreign", "forge_float_negative",
                                    "forge_float_text", "forge_float_twice"])
def test_a_forged_worker_line_fails_one_sample_and_the_run_finishes(library: Library, attack: str) -> None:
    info = grade_run(library, (CORPUS / f"{attack}.py").read_text())
    assert info.status == "completed", info
    assert info.counts == {"ok": 9, "error": 1}
    rows = {r["sample_id"]: r for r in library.runs.results(info.id)}
    assert rows["evil"]["status"] == "error" and rows["evil"]["error"]
    assert "Traceback" not in rows["evil"]["error"]
    assert all(rows[f"s{i}"]["score"] == 1.0 for i in range(10) if i != 4)


def test_a_run_broken_off_by_a_forged_line_resumes_to_the_end(library: Library) -> None:
    """A run whose process died mid-way (status 'running', a few results stored) is finished by resume
    even though the forging sample is still among the pending ones."""
    source = (CORPUS / "forge_deep_result.py").read_text()
    library.graders.create(FunctionGrader(key="g", source=source, timeout_seconds=1, memory_mb=256))
    library.datasets.create("d", make_samples(10, evil=7))
    run = start_run(library, "g", "d")
    stop = threading.Event()
    stop.set()  # graded nothing: the whole run is left for the resume
    execute_run(library, run.id, cancel=stop)
    info = execute_run(library, run.id)
    assert info.status == "completed" and info.counts == {"ok": 9, "error": 1}


def test_the_deadline_is_hard_and_counts_from_the_start(hostile_pool: WorkerPool) -> None:
    """Empty replies every 0.3 s do not extend a 1 s timeout (they used to, for 45 s)."""
    source = (CORPUS / "keepalive_replies.py").read_text()
    grader = FunctionGrader(key="k", source=source, timeout_seconds=1, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": hostile_pool}))
    try:
        [outcome] = scorer.score_sync(make_samples(1, evil=0))
    finally:
        scorer.close()
    assert outcome.status == "error" and outcome.error == "wall-time limit (1 s) exceeded"


def test_the_cpu_limit_is_set_before_grader_code_runs(hostile_pool: WorkerPool) -> None:
    probe = ("import resource\nasync def grade(thread):\n"
             "    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
             "    resource.setrlimit(resource.RLIMIT_CPU, (hard + 1000, hard + 1000))\n"
             "    return float(hard)\n")
    grader = FunctionGrader(key="cpu", source=probe, timeout_seconds=2, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": hostile_pool}))
    try:
        [outcome] = scorer.score_sync(make_samples(1))
    finally:
        scorer.close()
    assert outcome.status == "error" and "ValueError" in (outcome.error or "")  # cannot raise it
    grader = FunctionGrader(key="cpu2", source=probe.replace("    resource.setrlimit", "    # "),
                            timeout_seconds=2, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": hostile_pool}))
    try:
        [outcome] = scorer.score_sync(make_samples(1))
    finally:
        scorer.close()
    assert outcome.score is not None and outcome.score <= 2 + RECYCLE_CPU_SECONDS + CPU_GRACE_SECONDS + 1


def test_hung_samples_time_out_on_several_workers_at_once(hostile_pool: WorkerPool,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Four hung samples: after the first timeout the suspects run on fresh workers side by side."""
    in_flight, peak, lock = [0], [0], threading.Lock()
    original = process.WorkerProcess.grade

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        try:
            return original(self, *args, **kwargs)
        finally:
            with lock:
                in_flight[0] -= 1

    monkeypatch.setattr(process.WorkerProcess, "grade", counting)
    grader = FunctionGrader(key="hang", source="async def grade(thread):\n    while True:\n        pass\n",
                            timeout_seconds=1, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": hostile_pool}))
    try:
        outcomes = scorer.score_sync(make_samples(4))
    finally:
        scorer.close()
    assert [o.error for o in outcomes] == ["wall-time limit (1 s) exceeded"] * 4
    assert peak[0] >= 2


def test_the_default_timeout_suits_a_grader() -> None:
    assert FunctionGrader(key="x", source="").timeout_seconds == 10.0


def test_the_same_failure_on_the_first_samples_stops_the_run(library: Library) -> None:
    source = "import time\nasync def grade(thread):\n    time.sleep(0.1)\n    raise ValueError('no such column')\n"
    info = grade_run(library, source, n=40, evil=None)
    assert info.status == "failed"
    assert info.aggregates["stopped"].startswith("stopped after the first 5 samples all failed the same way")
    assert "ValueError: no such column" in info.aggregates["stopped"] and "--keep-going" in info.aggregates["stopped"]
    assert info.done < 40


def test_keep_going_grades_every_sample(library: Library) -> None:
    source = "async def grade(thread):\n    raise ValueError('no such column')\n"
    info = grade_run(library, source, n=40, evil=None, keep_going=True)
    assert info.status == "completed" and info.counts == {"error": 40}


def test_one_passing_sample_ends_the_watch(library: Library) -> None:
    source = ("async def grade(thread):\n    if thread.metadata.get('evil'):\n        return 1.0\n"
              "    raise ValueError('bad sample')\n")
    info = grade_run(library, source, n=30, evil=0)
    assert info.status == "completed" and info.counts == {"ok": 1, "error": 29}


def test_a_huge_grader_source_gets_a_sentence(hostile_pool: WorkerPool) -> None:
    source = "async def grade(thread):\n    return 1.0\n" + "# padding\n" * 1_300_000  # 13 MB
    grader = FunctionGrader(key="big", source=source, timeout_seconds=2, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": hostile_pool}))
    try:
        [outcome] = scorer.score_sync(make_samples(1))
    finally:
        scorer.close()
    assert outcome.status == "error"
    assert outcome.error == "the grader source is 12.4 MB; the limit is 64 KiB"
