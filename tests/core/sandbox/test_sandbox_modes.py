"""The fallbacks score too, and a cancel stops a running batch promptly."""

from __future__ import annotations

import shutil
import threading

import pytest
from namespaces_fallback import require_namespaces
from sandbox_helpers import make_samples

from studio.core.models import FunctionGrader, Outcome
from studio.core.sandbox.launch import _world_readable, is_root, python_runtime
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.sandbox.settings import SandboxSettings
from studio.core.scoring import GradingContext

EXACT = "async def grade(thread):\n    return 1.0 if thread.completion() == thread.metadata['expected'] else 0.0\n"
PROBE = "import os\nasync def grade(thread):\n    return float(os.path.exists('/etc/passwd'))\n"


def outcomes_with(mode: str, source: str, allow: bool = True) -> list[Outcome]:
    settings = SandboxSettings(mode=mode, allow_unsandboxed=allow)  # type: ignore[arg-type]
    pool = WorkerPool(size=1, settings=settings)
    scorer = FunctionScorer(FunctionGrader(key="m", source=source, timeout_seconds=5), GradingContext(options={"sandbox_pool": pool}))
    try:
        return scorer.score_sync(make_samples(3))
    finally:
        scorer.close()
        pool.close()


def score_with(mode: str, source: str) -> list[float | None]:
    return [o.score for o in outcomes_with(mode, source)]


def runtime_readable_by_nobody() -> bool:
    exe, _prefix = python_runtime()
    return not is_root() or _world_readable(exe)


@pytest.mark.parametrize("mode", ["namespaces", "limits_only"])
def test_a_fallback_refuses_grader_code_without_the_users_opt_in(mode: str) -> None:
    outcomes = outcomes_with(mode, EXACT, allow=False)
    for outcome in outcomes:
        assert outcome.status == "error"
        assert "bubblewrap" in (outcome.error or "") and "--allow-unsandboxed" in (outcome.error or "")


def test_namespaces_fallback_scores() -> None:
    require_namespaces()
    assert score_with("namespaces", EXACT) == [1.0, 1.0, 1.0]


def test_limits_only_fallback_scores_but_never_as_root() -> None:
    if runtime_readable_by_nobody():
        assert score_with("limits_only", EXACT) == [1.0, 1.0, 1.0]
    else:  # the studio is root and the runtime is private to root: a grader would run as uid 0
        errors = [o.error or "" for o in outcomes_with("limits_only", EXACT)]
        assert all("run as root, which is refused" in e for e in errors), errors


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_bubblewrap_and_the_namespaces_fallback_hide_the_host_files() -> None:
    assert score_with("bubblewrap", PROBE) == [0.0, 0.0, 0.0]
    require_namespaces()
    assert score_with("namespaces", PROBE) == [0.0, 0.0, 0.0]


def test_cancel_stops_a_running_batch(sandbox_pool: WorkerPool) -> None:
    """Samples 0-2 take 0.1 s; every later sample would sleep 30 s. Cancel keeps the first three
    scores and ends the rest as cancelled (without cancel this test would run for minutes and time out)."""
    slow = ("import time\nasync def grade(thread):\n"
            "    time.sleep(30 if thread.metadata.get('i', 0) >= 3 else 0.1)\n    return 1.0\n")
    ctx = GradingContext(options={"sandbox_pool": sandbox_pool})
    scorer = FunctionScorer(FunctionGrader(key="slow", source=slow, timeout_seconds=60), ctx)
    try:
        assert scorer.score_sync(make_samples(1))[0].score == 1.0  # a warm worker before the clock starts
        timer = threading.Timer(1.0, ctx.cancel.set)
        timer.start()
        try:
            outcomes = scorer.score_sync(make_samples(20))
        finally:
            timer.cancel()
    finally:
        scorer.close()
    assert [o.score for o in outcomes[:3]] == [1.0, 1.0, 1.0]
    assert all(o.status == "error" and o.error == "cancelled" for o in outcomes[3:])
    assert len(outcomes) == 20
