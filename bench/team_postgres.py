"""A 100,000-sample builtin run into a PostgreSQL library against the same run into SQLite.

The same dataset and grader (builtin ``exact_match``) in a SQLite file and in a database on a
PostgreSQL server on this machine (127.0.0.1 over TCP). ``--pg-url`` names a server of your own;
else one is started from the system's binaries as the tests start theirs (tests/pg.py: fsync and
synchronous_commit off, as SQLite's WAL with synchronous=NORMAL does not sync each commit either).
Times ``run_grader`` (plan, grade, write every result, aggregates) on each, alternating
backends ``--rounds`` times, and prints the medians and the ratio. The issue's target: within 2x.

Run: ``python bench/team_postgres.py [--samples 100000] [--rounds 3] [--pg-url URL]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from studio.core.engine.runner import run_grader
from studio.core.models import BuiltinGrader, Sample
from studio.core.store import Library

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def prepare(location: Path | str, samples: int) -> None:
    with Library.open(location) as lib:
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        lib.datasets.create("d", (Sample(id=f"s{i}", completion=str(i % 7), expected="3") for i in range(samples)))


def timed_run(location: Path | str) -> float:
    with Library.open(location) as lib:
        started = time.perf_counter()
        info = run_grader(lib, "exact", "d")
        seconds = time.perf_counter() - started
        assert info.status == "completed" and info.done == info.total, info
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pg-url", help="an empty database of your own (default: a server started here)")
    args = parser.parse_args()
    server = None
    if args.pg_url is None:
        from pg import PgServer

        server = PgServer()
        server.admin("CREATE DATABASE bench")
        pg_url = server.url("bench")
    else:
        pg_url = args.pg_url
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_path = Path(tmp) / "bench.sqlite"
            prepare(sqlite_path, args.samples)
            prepare(pg_url, args.samples)
            times: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
            for _ in range(args.rounds):
                times["sqlite"].append(timed_run(sqlite_path))
                times["postgresql"].append(timed_run(pg_url))
        sqlite_s, pg_s = statistics.median(times["sqlite"]), statistics.median(times["postgresql"])
        for name, values in times.items():
            print(f"{name:10s} " + "  ".join(f"{v:6.2f}s" for v in values)
                  + f"  median {statistics.median(values):.2f}s = {args.samples / statistics.median(values):,.0f} samples/s")
        print(f"PostgreSQL / SQLite: {pg_s / sqlite_s:.2f}x (target: within 2x)")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
