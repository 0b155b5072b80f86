"""Memory of a big run: ``grader-studio run`` with the built-in exact_match over 1,000,000 samples.

The dataset is written straight into SQLite first (one INSERT ... SELECT, not timed). The run is a
child process (peak RSS from the kernel's accounting of that child); meanwhile this process polls
the library with its own connection to see when the first results become visible. Baseline in the
same run: the peak RSS of ``grader-studio graders list`` (the interpreter and the stack imported).

Also the run's throughput, wall (start-up and summary included) and CPU (user + sys of the child,
far less load-sensitive on a shared machine), and the load average. ``--base DIR``: the same run of a
checkout of another commit (its ``studio`` first on PYTHONPATH) first, on a copy of the same library.

Targets (issue 38): peak RSS < 150 MB; results visible while the run goes on; >= 100,000 samples/s.
Run: ``python bench/run_memory.py [--samples N] [--base DIR]`` (1M takes about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from studio.core.models import BuiltinGrader
from studio.core.store import Library

TARGET_MB = 150
TARGET_RATE = 100_000


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


def watched(cli: list[str], env: dict[str, str], db: Path, n: int) -> dict[str, float | int | None]:
    """One ``run`` in a child while this process polls the library; its figures."""
    started = time.perf_counter()
    # in the checkout its PYTHONPATH names (``python -m`` puts the working directory first on sys.path)
    proc = subprocess.Popen([*cli, "run", "exact", "big", "--json"], env=env, stdout=subprocess.DEVNULL,
                            cwd=env.get("PYTHONPATH") or Path(__file__).resolve().parents[1])
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
    seconds = time.perf_counter() - started
    (stored,) = watcher.execute("SELECT count(*) FROM results").fetchone()
    watcher.close()
    return {"status": os.waitstatus_to_exitcode(status), "seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024, "first_seen": first_seen,
            "partial": sum(1 for c in counts if 0 < c < n), "stored": stored}


def fresh(clean: Path, db: Path) -> None:
    """``db`` a copy of ``clean``, with no write-ahead log of an earlier run left beside it."""
    for leftover in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(clean, db)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--base", type=Path, help="a checkout of the commit to compare with (before)")
    args = parser.parse_args()
    n = args.samples
    versions = {"this": None} if args.base is None else {"base": args.base.resolve(), "this": None}
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "clean.sqlite"
        build(clean, n)
        db = Path(tmp) / "lib.sqlite"
        fresh(clean, db)
        env = {**os.environ, "GRADER_STUDIO_DB": str(db)}
        cli = [sys.executable, "-m", "studio"]

        proc = subprocess.Popen([*cli, "graders", "list"], env=env, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        base_mb = usage.ru_maxrss / 1024
        load_before = os.getloadavg()[0]
        figures = {}
        for version, path in versions.items():
            fresh(clean, db)
            run_env = env if path is None else {**env, "PYTHONPATH": str(path)}
            figures[version] = watched(cli, run_env, db, n)
    print(f"{n:,} samples, built-in exact_match, `grader-studio run` in a child process")
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.2f} -> {os.getloadavg()[0]:.2f} "
          "(other work slows every row)")
    print(f"baseline `graders list` peak RSS {base_mb:6.0f} MB")
    ok = True
    for version, f in figures.items():
        seconds, cpu, peak_mb = float(f["seconds"] or 0), float(f["cpu"] or 0), float(f["peak_mb"] or 0)
        visible = "never" if f["first_seen"] is None else f"{f['first_seen']:.2f} s after start"
        print(f"[{version}] run: {seconds:6.2f} s wall ({n / seconds:,.0f} samples/s), {cpu:6.2f} s CPU "
              f"({n / cpu:,.0f} samples/s of CPU, {cpu / n * 1e6:.1f} us a sample), peak RSS {peak_mb:6.0f} MB = "
              f"{peak_mb / base_mb:4.2f}x the baseline (target < {TARGET_MB} MB); first results visible {visible}; "
              f"{f['partial']} polls saw a partial run; {f['stored']:,} stored")
        if version == "this":
            ok = f["status"] == 0 and f["stored"] == n and peak_mb < TARGET_MB and bool(f["partial"])
            print(f"throughput goal >= {TARGET_RATE:,} samples/s: wall {'met' if n / seconds >= TARGET_RATE else 'not met'}, "
                  f"CPU {'met' if n / cpu >= TARGET_RATE else 'not met'}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
