"""Every run has a start-up bound: a child that never begins grading (stuck on a path that blocks,
the library, a sandbox or a server that never answers) is stopped at the bound and said; a child that
fails before grading leaves its run "failed" with the sentence, never "pending" or "running". Real
child processes, driven by the real ``RunWorker``."""

from __future__ import annotations

import os
import sys

from run_helpers import math_samples

from studio.core.models import BuiltinGrader
from studio.core.store import Library
from studio.ui.runs import RunPanel, worker

WAIT_MS = 60_000
#: a child that starts and then never says anything (as one stuck opening a FIFO would)
HANGS = "import time, sys; sys.stderr.write('opening the dataset...\\n'); sys.stderr.flush(); time.sleep(3600)"


def _panel(qtbot, app_ctx, monkeypatch, code: str) -> RunPanel:  # type: ignore[no-untyped-def]
    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(10))
    monkeypatch.setattr(worker, "child_command", lambda db: [sys.executable, "-c", code])
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.select(grader="exact", dataset="math")
    return panel


def test_a_child_that_never_begins_grading_is_stopped_at_the_bound(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(worker, "STARTUP_SECONDS", 1.0)
    panel = _panel(qtbot, app_ctx, monkeypatch, HANGS)
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        run_id = panel.start()
        pid = int(panel.worker.process.processId())
    assert finished.args[0] is None and not panel.is_running()
    text = panel.message.text()
    assert f"Run {run_id} failed" in text and "did not start grading within 1 s" in text
    assert "opening the dataset" in text  # what the child said last
    info = app_ctx.library.runs.get(run_id)
    assert info.status == "failed" and "did not start grading within 1 s" in (app_ctx.library.runs.raw(run_id).error or "")
    assert not _alive(pid)


def test_a_child_that_fails_before_grading_leaves_the_run_failed(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, app_ctx, monkeypatch, "import sys; sys.exit('error: the sandbox never answered')")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS):
        run_id = panel.start()
    row = app_ctx.library.runs.raw(run_id)
    assert row.status == "failed" and "the sandbox never answered" in (row.error or "")
    assert app_ctx.library.runs.get(run_id).status == "failed"


def test_a_real_run_begins_grading_within_the_bound(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The real child reports grading as soon as its graders are ready: a short run completes."""
    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(10))
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.select(grader="exact", dataset="math")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        panel.start()
    assert finished.args[0] is not None and finished.args[0].status == "completed"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie not yet reaped is not running
        return fh.read().split(")")[-1].split()[0] != "Z"
