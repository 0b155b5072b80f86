"""The run's child process: the CLI's ``--progress-jsonl`` stream, and ``RunWorker`` driving it.

Real processes throughout: ``grader-studio run`` as a user (or the window) starts it, SIGINT to
cancel, a child that dies on its own, one that cannot find its run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_helpers import SLOW_CHILD, math_samples, slow_child_command

from studio.core.engine.runner import RunOptions, start_run
from studio.core.models import BuiltinGrader
from studio.core.store import Library
from studio.ui.runs import RunPanel, RunWorker, worker

REPO = Path(__file__).resolve().parents[3]
WAIT_MS = 30_000


@pytest.fixture
def math_library(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.datasets.create("math", math_samples(3000))
    return library


def math_panel(qtbot, app_ctx, monkeypatch, samples: int, command) -> RunPanel:  # type: ignore[no-untyped-def]
    """A run panel set to grade ``samples`` sums with exact_match, its child started by ``command(db)``."""
    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(samples))
    monkeypatch.setattr(worker, "child_command", command)
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.select(grader="exact", dataset="math")
    return panel


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_progress_jsonl_streams_events_and_ends_with_the_summary(math_library: Library, db_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "studio", "--db", str(db_path), "run", "exact", "math", "--progress-jsonl"],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    lines = events(result.stdout)
    started, *progress, summary = lines
    assert started["event"] == "started" and started["total"] == 3000 and started["done"] == 0
    assert set(started) == {"event", "run_id", "total", "done", "pid"}  # ("where" too, for a cluster)
    run_id = started["run_id"]
    assert progress and all(p["event"] == "progress" and p["run_id"] == run_id for p in progress)
    assert progress[-1]["finished"] and progress[-1]["done"] == 3000
    assert {"done", "total", "counts", "elapsed", "rate", "eta", "written", "finished"} <= set(progress[0])
    written = [i for p in progress for i in p["written"]]
    assert sorted(written) == list(range(3000))
    assert summary["event"] == "summary" and summary["exit_code"] == 0
    assert summary["summary"]["id"] == run_id and summary["summary"]["status"] == "completed"
    assert summary["run"]["counts"] == math_library.runs.get(run_id).counts
    assert result.stderr == ""  # no progress bar: stderr is not a terminal


def test_progress_jsonl_reports_a_value_refused_as_the_request_is_made_as_an_error_line(
        library: Library, db_path: Path) -> None:
    """The run request is made once, before any way of running it: a value it refuses (here
    ``--limit 0``) is still the stream's one error line, as every refusal after it is."""
    result = subprocess.run(
        [sys.executable, "-m", "studio", "--db", str(db_path), "run", "g", "d", "--limit", "0", "--progress-jsonl"],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 2
    (error,) = events(result.stdout)
    assert error["event"] == "error" and error["user_error"] is True and "--limit" in error["message"]


def test_progress_jsonl_reports_a_missing_run_as_an_error_line(library: Library, db_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "studio", "--db", str(db_path), "run", "--resume", "99", "--progress-jsonl"],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 2  # the run could not be done
    (error,) = events(result.stdout)
    assert error["event"] == "error" and error["user_error"] is True and "99" in error["message"]
    assert worker.describe_child_error(error) == error["message"]
    assert "error: no run with id 99" in result.stderr


def test_sigint_cancels_the_child_and_keeps_what_was_graded(math_library: Library, db_path: Path) -> None:
    run_id = start_run(math_library, "exact", "math").id
    child = subprocess.Popen(
        [sys.executable, str(SLOW_CHILD), "--db", str(db_path), "run", "--resume", str(run_id), "--progress-jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert child.stdout is not None
    seen = []
    for line in child.stdout:
        seen.append(json.loads(line))
        if seen[-1]["event"] == "progress" and seen[-1]["done"] >= 100:
            child.send_signal(2)  # SIGINT, as the worker sends it
            break
    out, err = child.communicate(timeout=30)
    summary = events(out)[-1]
    assert summary["event"] == "summary" and summary["run"]["status"] == "cancelled"
    assert child.returncode == 2 and "cancelling run" in err  # a cancelled run was not done
    info = math_library.runs.get(run_id)
    assert info.status == "cancelled" and 100 <= info.done < 3000


def test_worker_reports_progress_then_the_run(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(500))
    run_id = start_run(lib, "exact", "math", RunOptions(limit=300)).id
    w = RunWorker(lib, run_id, db_path=app_ctx.db_path)
    seen = []
    w.progress.connect(seen.append)
    with qtbot.waitSignal(w.completed, timeout=WAIT_MS) as done:
        w.start()
    info = done.args[0]
    assert info.id == run_id and info.status == "completed" and info.done == 300
    assert seen and seen[-1].finished and seen[-1].done == 300 and w.last_progress is seen[-1]
    assert w.wait(5000) and not w.is_running()
    w.deleteLater()


def test_a_child_that_dies_reports_its_stderr_tail(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code = "import sys; print('not json'); sys.stderr.write('line one\\nthe disk is on fire\\n'); sys.exit(3)"
    panel = math_panel(qtbot, app_ctx, monkeypatch, 10, lambda db: [sys.executable, "-c", code])
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        run_id = panel.start()
    assert finished.args[0] is None and not panel.is_running()
    text = panel.message.text()
    assert f"Run {run_id} failed" in text and "exited with code 3" in text and "the disk is on fire" in text
    assert "Traceback" not in text and panel.start_button.isEnabled()


def test_a_child_killed_mid_run_fails_and_the_run_stays_resumable(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    panel = math_panel(qtbot, app_ctx, monkeypatch, 3000, slow_child_command)
    run_id = panel.start()
    qtbot.waitUntil(lambda: panel.worker is not None and panel.worker.child_pid is not None
                    and panel.worker.last_progress is not None and panel.worker.last_progress.done > 0,
                    timeout=WAIT_MS)  # the first progress says grading began; wait for results written
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        os.kill(panel.worker.child_pid, 9)
    assert finished.args[0] is None
    assert "stopped unexpectedly" in panel.message.text()
    info = app_ctx.library.runs.get(run_id)
    assert 0 < info.done < 3000 and info.status != "completed"  # "running" until the store says otherwise
    qtbot.waitUntil(lambda: panel.runs.row_of(run_id) is not None, timeout=WAIT_MS)
    panel.open_run(run_id)
    assert panel.resume_button.isEnabled()
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        assert panel.resume(run_id)
    assert finished.args[0].status == "completed" and finished.args[0].done == 3000


def test_cancel_before_the_child_started_still_cancels(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    panel = math_panel(qtbot, app_ctx, monkeypatch, 3000, slow_child_command)
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        run_id = panel.start()
        panel.cancel()  # the child is still importing: the SIGINT waits for its "started" line
        assert panel.worker is not None and panel.worker.child_pid is None
    info = finished.args[0]
    assert info is not None and info.id == run_id and info.status == "cancelled" and info.done < 3000


def test_shutdown_cancels_and_reaps_the_child(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    panel = math_panel(qtbot, app_ctx, monkeypatch, 3000, slow_child_command)
    run_id = panel.start()
    child = panel.worker
    assert child is not None
    qtbot.waitUntil(lambda: child.last_progress is not None, timeout=WAIT_MS)
    panel.shutdown()
    assert not child.is_running() and not panel.is_running()
    qtbot.wait(100)  # the finished run's refresh is queued work of its own: let it end in this test
    assert app_ctx.tasks.wait_idle()
    assert app_ctx.library.runs.get(run_id).status == "cancelled"
