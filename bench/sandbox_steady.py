"""Steady rate of a sandboxed exact-match function grader: 300,000 samples, results persisted.

The dataset is written straight into SQLite (one INSERT ... SELECT, not timed). The run goes through
the engine (``run_grader``: warm sandbox workers, batches, the writer); its progress events give
the steady rate: samples written between the first and the last event over the time between them
(worker start-up and the final aggregates excluded). Baseline in the same run: the same grader
function called in a plain in-process loop (no sandbox, nothing stored), whose mean the run's mean
must equal.

Target: >= 100,000 samples/s steady (issue 38; issue 25's was 50,000). Run: ``python bench/sandbox_steady.py [--samples N]``.

``--base DIR [--rounds R]``: the same measurement of a checkout of another commit (its ``studio`` first
on PYTHONPATH) and of this tree, each in a child process, alternated over R rounds (base first), then
the best of each side: steady rate, the parent's CPU a sample in the steady window, the workers' CPU
and the process tree's (CPU is far less load-sensitive than the rate on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from studio.core.engine.runner import Progress, run_grader
from studio.core.models import FunctionGrader
from studio.core.sandbox.launch import GUEST_DIR
from studio.core.store import Library

sys.path.insert(0, str(Path(__file__).parent))
from sandbox_throughput import SOURCE  # noqa: E402 - the same grader

TARGET = 100_000


def build(db: Path, n: int) -> None:
    with Library.open(db) as lib:
        lib.graders.create(FunctionGrader(key="exact", source=SOURCE))
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO datasets (name, format, source, sample_count, created_at)"
                    " VALUES ('big', 'adaptive', '', ?, '2026-01-01 00:00:00')", (n,))
        (dataset_id,) = con.execute("SELECT id FROM datasets WHERE name = 'big'").fetchone()
        con.execute(
            """WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1)
               INSERT INTO samples (dataset_id, idx, sample_id, input_text, completion, expected, data)
               SELECT ?, i, 's' || i, 'What is ' || i || ' + ' || i || '?',
                      CAST(CASE WHEN i % 5 THEN 2 * i ELSE i END AS TEXT), CAST(2 * i AS TEXT),
                      json_object('id', 's' || i,
                                  'messages', json_array(json_object('role', 'user',
                                                                     'content', 'What is ' || i || ' + ' || i || '?')),
                                  'completion', CAST(CASE WHEN i % 5 THEN 2 * i ELSE i END AS TEXT),
                                  'expected', CAST(2 * i AS TEXT))
               FROM c""", (n, dataset_id))
    con.close()


def plain_loop(db: Path) -> tuple[float, float, int]:
    """(seconds, mean, count): the grader's own function over the stored samples, in-process."""
    sys.path.insert(0, str(GUEST_DIR / "shims"))
    from adaptive_harmony import StringThread

    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, "grader.py", "exec"), namespace)  # noqa: S102 - our own benchmark grader
    grade = namespace["grade"]
    con = sqlite3.connect(db)
    rows = [json.loads(d) for (d,) in con.execute("SELECT data FROM samples ORDER BY idx")]
    con.close()
    start = time.perf_counter()
    total = 0.0
    for s in rows:
        thread = StringThread([(t["role"], t["content"]) for t in s["messages"]] + [("assistant", s["completion"])],
                              metadata={"expected": s["expected"]})
        coro = grade(thread)
        try:
            coro.send(None)
        except StopIteration as stop:
            total += stop.value
    return time.perf_counter() - start, total / len(rows), len(rows)


#: a separate process (its own CPU is not the run's) that reads the CPU time of every descendant
#: of a pid from /proc every 20 ms and prints their sum, each pid at its last reading, when its
#: stdin closes: the sandbox workers' CPU (they are killed, not reaped by us, so os.times() misses it)
_WATCH = r"""
import os, sys, threading
root, tick = int(sys.argv[1]), os.sysconf("SC_CLK_TCK")
seen, stop = {}, threading.Event()
def scan():
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kids.setdefault(int(f[1]), []).append((int(p), (int(f[11]) + int(f[12])) / tick))
    todo = [root]
    while todo:
        for pid, cpu in kids.get(todo.pop(), ()):
            if pid != os.getpid():
                seen[pid] = max(seen.get(pid, 0.0), cpu)
                todo.append(pid)
def loop():
    while not stop.wait(0.02):
        scan()
scan()
first = dict(seen)
t = threading.Thread(target=loop); t.start()
sys.stdin.read(); stop.set(); t.join(); scan()
print(sum(seen.values()) - sum(first.values()))
"""


def _watch_workers() -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _WATCH, str(os.getpid())], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--drop-indexes", action="store_true",
                        help="diagnostic: drop the results table's four secondary indexes first, to see "
                             "what the run would do with a cheaper write (not a figure of the product)")
    parser.add_argument("--base", type=Path, help="a checkout of the commit to compare with (before)")
    parser.add_argument("--rounds", type=int, default=2, help="with --base: alternated rounds (best of each)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child's figures, one line
    args = parser.parse_args()
    n = args.samples
    if args.base is not None:
        return alternated(args.base.resolve(), n, args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "lib.sqlite"
        build(db, n)
        if args.drop_indexes:
            con = sqlite3.connect(db)
            for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'results'"
                                       " AND sql IS NOT NULL").fetchall():
                con.execute(f"DROP INDEX {name}")
            con.commit()
            con.close()
            print("results' secondary indexes dropped (diagnostic run)")
        plain_s, plain_mean, _ = plain_loop(db)
        events: list[tuple[float, int, float]] = []

        def watch(progress: Progress) -> None:
            if not progress.finished:
                events.append((time.perf_counter(), progress.done, time.process_time()))

        with Library.open(db) as lib:
            cpu_before = time.process_time()
            watcher = _watch_workers()
            started = time.perf_counter()
            info = run_grader(lib, "exact", "big", on_progress=watch)
            total_s = time.perf_counter() - started
            cpu_s = time.process_time() - cpu_before
            workers_s = float(watcher.communicate("")[0])  # the run's workers (and any spare started)
    (t0, d0, c0), (t1, d1, c1) = events[0], events[-1]
    steady = (d1 - d0) / (t1 - t0) if t1 > t0 else float("nan")
    steady_cpu = (c1 - c0) / (d1 - d0) if d1 > d0 else float("nan")
    mean = info.aggregates.get("mean")
    print(f"{n:,} samples, exact-match Adaptive function grader, sandboxed, results persisted")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    print(f"{'plain in-process loop':<34} {n / plain_s:9,.0f} samples/s  mean {plain_mean:.6f}")
    print(f"{'engine, steady state':<34} {steady:9,.0f} samples/s  = {steady / (n / plain_s):5.3f} of the plain loop "
          f"(first results after {t0 - started:.2f} s; whole run {n / total_s:,.0f}/s)  mean {mean:.6f}")
    # load-independent view: the parent's own CPU per sample (the workers run in other processes);
    # with a core to itself the parent could not go faster than one sample per that much CPU
    print(f"{'parent CPU':<34} {cpu_s / n * 1e6:9.1f} us/sample -> at most {n / cpu_s:,.0f} samples/s "
          f"with a core of its own ({cpu_s / total_s:.0%} of a core used here)")
    # the same between the first and the last progress event: the steady loop alone (start-up and
    # the final aggregates left out, as the steady rate leaves them out)
    print(f"{'parent CPU, steady':<34} {steady_cpu * 1e6:9.1f} us/sample -> at most {1 / steady_cpu:,.0f} samples/s "
          f"with a core of its own ({(c1 - c0) / (t1 - t0):.0%} of a core used here)")
    print(f"{'workers CPU':<34} {workers_s / n * 1e6:9.1f} us/sample (every sandbox process of the run: bwrap, "
          f"workers, their start-up; read every 20 ms from /proc by another process); process tree {(cpu_s + workers_s) / n * 1e6:.1f} us/sample -> at most "
          f"{n / (cpu_s + workers_s) * (os.cpu_count() or 1):,.0f} samples/s on {os.cpu_count()} idle cores")
    ok = steady >= TARGET and info.done == n and mean is not None and abs(mean - plain_mean) < 1e-9
    print(f"target >= {TARGET:,}/s steady and the same mean: {'PASS' if ok else 'FAIL'}")
    if args.json:
        print(json.dumps({"steady": steady, "parent_steady_us": steady_cpu * 1e6, "parent_us": cpu_s / n * 1e6,
                          "workers_us": workers_s / n * 1e6, "tree_us": (cpu_s + workers_s) / n * 1e6,
                          "same_mean": mean is not None and abs(mean - plain_mean) < 1e-9, "done": info.done,
                          "load": os.getloadavg()[0]}))
    return 0 if ok else 1


def alternated(base: Path, n: int, rounds: int) -> int:
    """Base and this tree in child processes, alternated; the best figures of each."""
    here = Path(__file__).resolve()
    figures: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    for _ in range(rounds):
        for side, path in (("base", base), ("this", here.parents[1])):
            env = {**os.environ, "PYTHONPATH": str(path)}
            out = subprocess.run([sys.executable, str(here), "--samples", str(n), "--json"], env=env, cwd=path,
                                 capture_output=True, text=True, check=False)
            lines = out.stdout.strip().splitlines()
            if not lines or not lines[-1].startswith("{"):
                print(f"[{side}] failed:\n{out.stdout}{out.stderr[-2000:]}")
                return 1
            figure = json.loads(lines[-1])
            figures[side].append(figure)
            print(f"[{side}] steady {figure['steady']:9,.0f} samples/s; CPU a sample: parent (steady) "
                  f"{figure['parent_steady_us']:5.1f} us, workers {figure['workers_us']:5.1f} us, process tree "
                  f"{figure['tree_us']:5.1f} us; same mean {figure['same_mean']}; load {figure['load']:.2f}", flush=True)
    print(f"{n:,} samples, sandboxed exact-match function grader, base {base} vs this tree, best of {rounds}:")
    for side, runs in figures.items():
        print(f"[{side}] steady {max(f['steady'] for f in runs):9,.0f} samples/s; CPU a sample: parent (steady) "
              f"{min(f['parent_steady_us'] for f in runs):5.1f} us, workers {min(f['workers_us'] for f in runs):5.1f} us, "
              f"process tree {min(f['tree_us'] for f in runs):5.1f} us")
    ok = all(f["same_mean"] and f["done"] == n for runs in figures.values() for f in runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
