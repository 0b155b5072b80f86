"""The built-in write path killed and resumed (issue 38): ``grader-studio run`` of exact_match in a
child process, SIGKILLed at random moments once some results are stored, resumed each time; every
sample is then stored exactly once, with the score the grader's rule gives it (and, for the smaller
run, the score an uninterrupted run of the same data gave). ``test_run_resume.py`` covers a
sandboxed function grader killed once; this is the plain builtin rows' fast path (batched plain
inserts), at 1,000,000 samples in the slow suite and 30,000 in the default one.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studio.core.models import BuiltinGrader
from studio.core.store import Library


def build(db: Path, n: int) -> None:
    """A library with the built-in exact_match and a dataset ``big`` of ``n`` samples, one in seven
    answered wrong, written straight into SQLite (one INSERT ... SELECT: 1M in a few seconds)."""
    with Library.open(db) as lib:
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute("INSERT INTO datasets (name, format, source, sample_count, created_at)"
                        " VALUES ('big', 'flat', '', ?, '2026-01-01 00:00:00')", (n,))
            (dataset_id,) = con.execute("SELECT id FROM datasets WHERE name = 'big'").fetchone()
            con.execute(
                """WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1)
                   INSERT INTO samples (dataset_id, idx, sample_id, input_text, completion, expected, data)
                   SELECT ?, i, 's' || i, 'question ' || i, 'answer ' || i, 'answer ' || (i - i % 7 / 6),
                          json_object('id', 's' || i, 'messages', json_array(json_object('role', 'user',
                                      'content', 'question ' || i)), 'completion', 'answer ' || i,
                                      'expected', 'answer ' || (i - i % 7 / 6))
                   FROM c""", (n, dataset_id))
    finally:
        con.close()


def stored(db: Path, run_id: int) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = con.execute("SELECT count(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()
        return int(row[0])
    except sqlite3.OperationalError:  # the run's first transaction holds the file a moment
        return 0
    finally:
        con.close()


def start(db: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GRADER_STUDIO_DB": str(db)}
    return subprocess.Popen([sys.executable, "-m", "studio", "run", *args, "--json"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def kill_when(db: Path, proc: subprocess.Popen[bytes], at: int, jitter: float, timeout: float) -> int | None:
    """SIGKILL ``proc`` once ``at`` results are stored (then ``jitter`` seconds later: a random moment
    inside a batch's write, not only between batches); the results it kept, None if it finished first."""
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and stored(db, 1) < at:
            assert time.monotonic() < deadline, f"no {at} results stored within {timeout:.0f} s"
            time.sleep(0.002)
        time.sleep(jitter)
        if proc.poll() is not None:
            return None
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=120)
    return stored(db, 1)


def kill_and_resume(db: Path, cli, n: int, kills: int, seed: int, timeout: float) -> list[int]:  # type: ignore[no-untyped-def]
    """The run started, killed ``kills`` times at random counts (each above the last), resumed to
    the end; returns the counts kept at each kill."""
    rng = random.Random(seed)
    moments = sorted(rng.sample(range(n // 20, n * 6 // 10), kills))
    kept: list[int] = []
    proc: subprocess.Popen[bytes] | None = start(db, "exact", "big")
    for at in moments:
        assert proc is not None
        got = kill_when(db, proc, max(at, (kept[-1] if kept else 0) + 1), rng.uniform(0, 0.01), timeout)
        if got is None:  # it finished before this moment: nothing left to kill
            break
        listed = json.loads(cli("runs", "list", "--json").stdout)
        assert listed[-1]["id"] == 1
        if listed[-1]["status"] == "completed":  # killed after its last write, before it exited
            assert got == n
            proc = None
            break
        assert listed[-1]["status"] == "interrupted"
        kept.append(got)
        proc = start(db, "--resume", "1")
    if proc is not None:
        _, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err.decode()[-2000:]
    return kept


def check_exactly_once(db: Path, n: int) -> None:
    """Every sample stored once, ok, under its own id, scored by exact_match's rule on its texts."""
    con = sqlite3.connect(db)
    try:
        total, distinct, low, high = con.execute(
            "SELECT count(*), count(DISTINCT sample_idx), min(sample_idx), max(sample_idx) FROM results"
            " WHERE run_id = 1").fetchone()
        assert (total, distinct, low, high) == (n, n, 0, n - 1)
        (status,) = con.execute("SELECT status FROM runs WHERE id = 1").fetchone()
        assert status == "completed"
        wrong = con.execute(
            "SELECT r.sample_idx, r.sample_id, r.status, r.score, s.completion, s.expected FROM results r"
            " JOIN runs ON runs.id = r.run_id JOIN samples s ON s.dataset_id = runs.dataset_id"
            " AND s.idx = r.sample_idx WHERE r.run_id = 1 AND (r.status <> 'ok' OR r.sample_id <> s.sample_id"
            " OR r.score IS NOT (CASE WHEN s.completion = s.expected THEN 1.0 ELSE 0.0 END)) LIMIT 5").fetchall()
        assert wrong == []
        (failed,) = con.execute("SELECT count(*) FROM results WHERE run_id = 1 AND score = 0").fetchone()
        assert failed == sum(1 for i in range(n) if i % 7 == 6)  # the rule's zeros, counted apart
    finally:
        con.close()


def test_builtin_run_killed_twice_and_resumed_stores_each_sample_once(db_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    n = 30_000
    build(db_path, n)
    kept = kill_and_resume(db_path, cli, n, kills=2, seed=38, timeout=300)
    # killed at least once with results kept and some left (a kill after the last write, before the
    # run was marked complete, is a kill too: the resume then grades nothing and completes it)
    assert kept and all(0 < k <= n for k in kept) and min(kept) < n, kept
    assert kept == sorted(kept)  # a resume never loses what was stored
    check_exactly_once(db_path, n)
    # the same scores as an uninterrupted run of the same data (run 2), sample by sample
    uninterrupted = cli("run", "exact", "big", "--json")
    assert uninterrupted.returncode in (0, 1), uninterrupted.stderr
    con = sqlite3.connect(db_path)
    try:
        (differ,) = con.execute(
            "SELECT count(*) FROM results a JOIN results b ON b.run_id = 2 AND b.sample_idx = a.sample_idx"
            " WHERE a.run_id = 1 AND (a.score IS NOT b.score OR a.status <> b.status)").fetchone()
        (both,) = con.execute("SELECT count(*) FROM results WHERE run_id = 2").fetchone()
    finally:
        con.close()
    assert (differ, both) == (0, n)
    shown = json.loads(cli("runs", "show", "1", "--json", "--limit", "0").stdout)
    assert shown["run"]["done"] == n and len(shown["results"]) == n


@pytest.mark.slow
@pytest.mark.timeout(2400)  # four runs of a million samples on two shared cores
def test_million_sample_builtin_run_killed_at_random_moments_and_resumed(db_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    n = 1_000_000
    build(db_path, n)
    seed = int(os.environ.get("KILL_SEED", "0")) or random.randrange(1, 1 << 30)
    kept = kill_and_resume(db_path, cli, n, kills=3, seed=seed, timeout=1800)
    assert kept and all(0 < k <= n for k in kept) and min(kept) < n, (seed, kept)
    assert kept == sorted(kept), (seed, kept)
    check_exactly_once(db_path, n)
