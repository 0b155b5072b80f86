"""The fallbacks score too, and a cancel stops a running batch promptly."""

from __future__ import annotations

import shutil
import sys
import threading
import time

import pytest
from sandbox_helpers import make_samples

from studio.core.models import FunctionGrader
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.sandbox.settings import SandboxSettings
from studio.core.scoring import GradingContext

EXACT = "async def grade(thread):\n    return 1.0 if thread.completion() == thread.metadata['expected'] else 0.0\n"
PROBE = "import os\nasync def grade(thread):\n    return float(os.path.exists('/etc/passwd'))\n"


def score_with(mode: str, source: str) -> list[float | None]:
    pool = WorkerPool(size=1, settings=SandboxSettings(mode=mode))  # type: ignore[arg-type]
    scorer = FunctionScorer(FunctionGrader(key="m", source=source, timeout_seconds=5), GradingContext(options={"sandbox_pool": pool}))
    try:
        return [o.score for o in scorer.score_sync(make_samples(3))]
    finally:
        scorer.close()
        pool.close()


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("unshare") is None, reason="needs unshare")
def test_namespaces_fallback_scores() -> None:
    assert score_with("namespaces", EXACT) == [1.0, 1.0, 1.0]


def test_limits_only_fallback_scores() -> None:
    assert score_with("limits_only", EXACT) == [1.0, 1.0, 1.0]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_bubblewrap_hides_the_host_files_the_fallbacks_show() -> None:
    assert score_with("bubblewrap", PROBE) == [0.0, 0.0, 0.0]
    assert score_with("limits_only", PROBE) == [1.0, 1.0, 1.0]


def test_cancel_stops_a_running_batch(sandbox_pool: WorkerPool) -> None:
    slow = "import time\nasync def grade(thread):\n    time.sleep(0.5)\n    return 1.0\n"
    ctx = GradingContext(options={"sandbox_pool": sandbox_pool})
    scorer = FunctionScorer(FunctionGrader(key="slow", source=slow, timeout_seconds=5), ctx)
    timer = threading.Timer(0.7, ctx.cancel.set)
    timer.start()
    start = time.perf_counter()
    try:
        outcomes = scorer.score_sync(make_samples(20))
    finally:
        scorer.close()
        timer.cancel()
    assert time.perf_counter() - start < 2.5
    assert outcomes[0].score == 1.0
    assert outcomes[-1].status == "error" and outcomes[-1].error == "cancelled"
    assert len(outcomes) == 20
