"""A run killed with SIGKILL keeps every finished sample; --resume grades only the rest."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from studio.core.models import BuiltinGrader, FunctionGrader, Sample, Turn
from studio.core.store import Library

SLOW = """import time
from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    time.sleep(0.02)
    return 1.0 if thread.completion() == thread.metadata.get("expected") else 0.0
"""


def stored(db: Path, run_id: int) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()[0]
    finally:
        conn.close()


def test_sigkill_then_resume(db_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    with Library.open(db_path) as lib:
        lib.graders.create(FunctionGrader(key="slow", source=SLOW))
        lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")],
                                         completion=str(i % 3), expected="0") for i in range(300)])
    env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
    proc = subprocess.Popen([sys.executable, "-m", "studio", "run", "slow", "d", "--json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while stored(db_path, 1) < 40 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    kept = stored(db_path, 1)
    assert 40 <= kept < 300

    listed = json.loads(cli("runs", "list", "--json").stdout)
    assert listed[0]["status"] == "interrupted"

    resumed = cli("run", "--resume", "1", "--json")
    summary = json.loads(resumed.stdout)
    assert summary["status"] == "completed" and summary["done"] == 300
    results = json.loads(cli("runs", "show", "1", "--json").stdout)["results"]
    assert sorted(r["index"] for r in results) == list(range(300))  # each sample exactly once
    assert sum(r["score"] for r in results) == 100
    again = cli("run", "--resume", "1")
    assert again.returncode == 2 and "already complete" in again.stderr  # 2: the run could not be done


def test_a_run_whose_window_is_gone_stops(db_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """The window's child run watches its stdin: when the window dies, the run cancels cleanly."""
    with Library.open(db_path) as lib:
        lib.graders.create(FunctionGrader(key="slow", source=SLOW))
        lib.datasets.create("d", [Sample(id=f"s{i}", completion="0", expected="0") for i in range(2000)])
    env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
    proc = subprocess.Popen([sys.executable, "-m", "studio", "run", "slow", "d", "--progress-jsonl",
                             "--cancel-on-stdin-eof"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    for line in proc.stdout:  # the first progress says grading began; wait for results written
        event = json.loads(line)
        if event["event"] == "progress" and event["done"] > 0:
            break
    proc.stdin.close()  # what the OS does when the window's process dies
    proc.stdout.read()
    proc.wait(timeout=60)
    info = json.loads(cli("runs", "list", "--json").stdout)[0]
    assert info["status"] == "cancelled" and 0 < info["done"] < 2000


def test_a_window_run_ends_cleanly_while_the_window_still_holds_its_stdin(db_path: Path) -> None:
    """The child's stdin watcher is still reading when the run ends; its reader must not be a
    buffered one, whose lock at interpreter shutdown is a fatal error (the child died of SIGABRT,
    with a core dump, after every run the window started)."""
    with Library.open(db_path) as lib:
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        lib.datasets.create("d", [Sample(id=f"s{i}", completion="0", expected="0") for i in range(20)])
    env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
    proc = subprocess.Popen([sys.executable, "-m", "studio", "run", "exact", "d", "--progress-jsonl",
                             "--cancel-on-stdin-eof"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    try:  # stdin stays open until the child has exited, as the window keeps it
        out = proc.stdout.read()  # to its end: the child closed it by exiting
        proc.wait(timeout=60)
        err = proc.stderr.read()
    finally:
        proc.stdin.close()
    assert b'"event": "summary"' in out
    assert b"Fatal Python error" not in err, err.decode(errors="replace")
    assert proc.returncode == 0
