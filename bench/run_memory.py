"""Memory of a big run: ``grader-studio run`` with the built-in exact_match over 1,000,000 samples.

The dataset is written straight into SQLite first (one INSERT ... SELECT, not timed). The run is a
child process (peak RSS from the kernel's accounting of that child); meanwhile this process polls
the library with its own connection to see when the first results become visible. Baseline in the
same run: the peak RSS of ``grader-studio graders list`` (the interpreter and the stack imported).

Targets: peak RSS < 150 MB; results visible while the run goes on.
Run: ``python bench/run_memory.py [--samples N]`` (1M takes about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from studio.core.models import BuiltinGrader
from studio.core.store import Library

TARGET_MB = 150


def build(db: Path, n: int) -> None:
    with Library.open(db) as lib:
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    con = sqlite3.connect(db)
    with con:
        now = "2026-01-01 00:00:00"
        con.execute("INSERT INTO datasets (name, format, source, sample_count, created_at) VALUES (?, 'flat', '', ?, ?)",
                    ("big", n, now))
        (dataset_id,) = con.execute("SELECT id FROM datasets WHERE name = 'big'").fetchone()
        con.execute(
            """WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1)
               INSERT INTO samples (dataset_id, idx, sample_id, input_text, completion, expected, data)
               SELECT ?, i, 's' || i, 'question ' || i, 'answer ' || i, 'answer ' || (i - i % 7 / 6),
                      json_object('id', 's' || i, 'completion', 'answer ' || i,
                                  'expected', 'answer ' || (i - i % 7 / 6))
               FROM c""", (n, dataset_id))
    con.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.samples
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "lib.sqlite"
        build(db, n)
        env = {**os.environ, "GRADER_STUDIO_DB": str(db)}
        cli = [sys.executable, "-m", "studio"]

        proc = subprocess.Popen([*cli, "graders", "list"], env=env, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        base_mb = usage.ru_maxrss / 1024

        started = time.perf_counter()
        proc = subprocess.Popen([*cli, "run", "exact", "big", "--json"], env=env, stdout=subprocess.DEVNULL)
        watcher = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        first_seen = None
        counts: list[int] = []
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # reaps it and keeps its rusage
            if pid:
                break
            time.sleep(0.25)
            try:
                (count,) = watcher.execute("SELECT count(*) FROM results").fetchone()
            except sqlite3.OperationalError:
                continue
            counts.append(count)
            if count and first_seen is None:
                first_seen = time.perf_counter() - started
        proc.returncode = status
        seconds = time.perf_counter() - started
        peak_mb = usage.ru_maxrss / 1024
        (stored,) = watcher.execute("SELECT count(*) FROM results").fetchone()
        watcher.close()
    print(f"{n:,} samples, built-in exact_match, `grader-studio run` in a child process")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    print(f"baseline `graders list` peak RSS {base_mb:6.0f} MB")
    visible = "never" if first_seen is None else f"{first_seen:.2f} s after start"
    partial = sum(1 for c in counts if 0 < c < n)
    print(f"run: {seconds:6.2f} s ({n / seconds:,.0f} samples/s), peak RSS {peak_mb:6.0f} MB = "
          f"{peak_mb / base_mb:4.2f}x the baseline (target < {TARGET_MB} MB); first results visible {visible}; "
          f"{partial} polls saw a partial run; {stored:,} stored")
    ok = status == 0 and stored == n and peak_mb < TARGET_MB and partial > 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
