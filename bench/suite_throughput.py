"""A suite of five built-in graders over 100,000 samples against one of them alone.

Both are ``grader-studio run`` in a child process on the same library (the dataset written straight
into SQLite first, not timed): one pass over the samples either way, the suite writing one row a
sample (every score under ``scores`` by grader key) where the lone grader writes its own. Timed end
to end (start-up and the summary included), with each child's CPU time (user + sys, far less
load-sensitive than wall time on a shared machine) and peak RSS from the kernel's accounting. Every
run starts from a copy of the same freshly built library. The runs alternate ``--rounds`` times and
the best of each is kept, so a burst of load from the other users of a shared machine hits all
alike; the machine's load average is printed with the figures. ``--base DIR``: the same runs of a
checkout of another commit (its ``studio`` package first on PYTHONPATH) in the same rounds, for
before/after figures; ``--base`` may be given more than once (e.g. the issue's base and the session's
start), each reported under its directory's name. Every tree timed is byte-compiled first (this
machine sets PYTHONDONTWRITEBYTECODE: an uncompiled tree would compile every module in every run).

Targets (issue 38): the suite within 1.3x the single grader's time (one pass over the samples, the
scoring the only extra); peak memory flat (about the single run's).
``--functions``: a suite of two sandboxed function graders (the raw lane: each worker gets the stored
JSON) against the first alone; the suite's host reads no sample but a failed one's, as the lone
grader's raw lane (engine/stored_samples.py), so its CPU over the lone grader's is the second
grader's work; ``--base`` a checkout from before that (every sample parsed on the host).
Run: ``python bench/suite_throughput.py [--samples N] [--rounds R] [--functions] [--base DIR [--base DIR2]]``.
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

from studio.core.models import BuiltinGrader, FunctionGrader
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library

TARGET_RATIO = 1.3
GRADERS = [
    BuiltinGrader(key="exact", function="exact_match"),
    BuiltinGrader(key="has", function="contains"),
    BuiltinGrader(key="starts", function="starts_with"),
    BuiltinGrader(key="ends", function="ends_with"),
    BuiltinGrader(key="printable", function="ascii_printable_only"),
]
#: ``--with-f1``: token_f1 in place of ends_with (it tokenises both texts: alone it costs several
#: times exact_match, so that suite measures the checks more than the engine)
F1 = BuiltinGrader(key="f1", function="token_f1")
#: ``--functions``: two sandboxed function graders (two contracts), the raw lane
FUNCTIONS = [
    FunctionGrader(key="same", source="from adaptive_harmony import StringThread\n\n"
                   "async def grade(thread: StringThread) -> float:\n"
                   "    return 1.0 if thread.completion() == thread.metadata.get('expected') else 0.0\n"),
    FunctionGrader(key="sevens", contract="promptfoo",
                   source="def get_assert(output, context):\n    return 1.0 if output.endswith('7') else 0.0\n"),
]


def build(db: Path, n: int, graders: list[BuiltinGrader] | list[FunctionGrader] = GRADERS) -> None:
    with Library.open(db) as lib:
        for grader in graders:
            lib.graders.create(grader)
        lib.suites.create(SuiteDefinition(key="five", overall="mean",
                                          graders=[SuiteMember(grader=g.key) for g in graders]))
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


def timed(cli: list[str], env: dict[str, str], *args: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB) of one child run, in the checkout its PYTHONPATH
    names (``python -m`` puts the working directory first on sys.path)."""
    started = time.perf_counter()
    proc = subprocess.Popen([*cli, *args], env=env, stdout=subprocess.DEVNULL,
                            cwd=env.get("PYTHONPATH") or Path(__file__).resolve().parents[1])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def report(label: str, n: int, one: list[tuple[float, float, float]], suite: list[tuple[float, float, float]],
           alone: str = "exact_match", what: str = "five built-ins") -> None:
    best_one, best_suite = min(one), min(suite)
    cpu_one, cpu_suite = min(r[1] for r in one), min(r[1] for r in suite)
    print(f"[{label}] one grader ({alone}): best {best_one[0]:.2f} s wall, {cpu_one:.2f} s CPU "
          f"({cpu_one / n * 1e6:.1f} us a sample), {n / best_one[0]:,.0f} samples/s, peak {max(r[2] for r in one):.0f} MB")
    print(f"[{label}] suite of {what}:  best {best_suite[0]:.2f} s wall, {cpu_suite:.2f} s CPU "
          f"({cpu_suite / n * 1e6:.1f} us a sample), {n / best_suite[0]:,.0f} samples/s, peak {max(r[2] for r in suite):.0f} MB")
    print(f"[{label}] suite / one: wall {best_suite[0] / best_one[0]:.2f}x, CPU {cpu_suite / cpu_one:.2f}x "
          f"(goal <= {TARGET_RATIO}x)")
    print(f"[{label}] all rounds (wall s, CPU s, MB): one " + "; ".join(f"{w:.2f}, {c:.2f}, {m:.0f}" for w, c, m in one)
          + " | suite " + "; ".join(f"{w:.2f}, {c:.2f}, {m:.0f}" for w, c, m in suite))


def fresh(clean: Path, db: Path) -> None:
    """``db`` a copy of ``clean``, with no write-ahead log of an earlier run left beside it."""
    for leftover in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(clean, db)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--with-f1", action="store_true", help="token_f1 in place of ends_with")
    parser.add_argument("--functions", action="store_true", help="a suite of two sandboxed function graders")
    parser.add_argument("--base", type=Path, action="append", default=[],
                        help="a checkout of a commit to compare with (before); may be repeated")
    args = parser.parse_args()
    graders: list[BuiltinGrader] | list[FunctionGrader] = (
        FUNCTIONS if args.functions else [*GRADERS[:3], F1, GRADERS[4]] if args.with_f1 else GRADERS)
    print("suite: " + ", ".join(g.key for g in graders))
    versions: dict[str, Path | None] = {base.resolve().name: base.resolve() for base in args.base}
    versions["this"] = None
    for tree in (Path(__file__).resolve().parents[1], *args.base):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "studio")], check=True,
                       stdout=subprocess.DEVNULL)
    times: dict[str, dict[str, list[tuple[float, float, float]]]] = {v: {"one": [], "suite": []} for v in versions}
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "clean.sqlite"
        build(clean, args.samples, graders)
        db = Path(tmp) / "lib.sqlite"
        cli = [sys.executable, "-m", "studio"]
        load_before = os.getloadavg()[0]
        rows = extra = 0
        for _ in range(args.rounds):
            for target, key in (("one", graders[0].key), ("suite", "five")):
                for version, path in versions.items():
                    fresh(clean, db)  # every run on the same fresh library
                    env = {**os.environ, "GRADER_STUDIO_DB": str(db)}
                    if path is not None:
                        env["PYTHONPATH"] = str(path)
                    times[version][target].append(timed(cli, env, "run", key, "big", "--json"))
                    if version == "this" and target == "suite":
                        con = sqlite3.connect(db)
                        rows = con.execute("SELECT count(*) FROM results").fetchone()[0]
                        extra = con.execute("SELECT count(*) FROM grader_results").fetchone()[0]
                        con.close()
        load_after = os.getloadavg()[0]
    print(f"samples {args.samples:,}, rounds {args.rounds}, load average {load_before:.1f} -> {load_after:.1f} "
          f"({os.cpu_count()} CPUs)")
    for version in versions:
        report(version, args.samples, times[version]["one"], times[version]["suite"], graders[0].key,
               "two sandboxed functions" if args.functions else "five built-ins")
    for base in versions:
        if base == "this":
            continue
        for target in ("one", "suite"):
            before, after = min(r[1] for r in times[base][target]), min(r[1] for r in times["this"][target])
            wall_b, wall_a = min(times[base][target])[0], min(times["this"][target])[0]
            print(f"{target}: {base} -> this: wall {wall_b:.2f} -> {wall_a:.2f} s, CPU {before:.2f} -> {after:.2f} s")
    print(f"rows written by the suite: {rows:,} sample rows, {extra:,} per-grader rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
