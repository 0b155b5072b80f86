"""The store's result write path against a raw ``sqlite3`` floor, in one process, same schema.

1. ``RunRepository.write_results``: (idx, sample id, Outcome) rows in batches of 2,000, what the
   engine's writer hands it; and ``write_rows`` with the row tuples ready (the store's own cost)
2. the floor: the same rows as ready-made tuples, ``executemany`` on a bare ``sqlite3`` connection
   to a library file with the same schema and indexes, one transaction per 2,000 rows

Prints rows/s and the ratio. Run: ``python bench/store_writes.py [--rows N]``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from studio.core.models import BuiltinGrader, Outcome, Sample
from studio.core.store import Library
from studio.core.store.runs import _INSERT_RESULT_VALUES, outcome_values

BATCH = 2000


def setup(path: Path) -> tuple[Library, int]:
    lib = Library.open(path)
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("d", [Sample(id="s0", completion="a", expected="a")])
    run = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, 0)
    return lib, run.id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()
    n = args.rows
    outcomes = [Outcome.scored(float(i % 2), {"score": float(i % 2)}, duration_ms=0.01) for i in range(n)]
    rows = [(i, f"s{i}", outcomes[i]) for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        lib, run_id = setup(Path(tmp) / "store.sqlite")
        started = time.perf_counter()
        for at in range(0, n, BATCH):
            lib.runs.write_results(run_id, rows[at:at + BATCH])
        store_s = time.perf_counter() - started
        lib.close()

        rows_lib, rows_run = setup(Path(tmp) / "rows.sqlite")
        ready = [outcome_values(rows_run, i, sid, o) for i, sid, o in rows]
        started = time.perf_counter()
        for at in range(0, n, BATCH):
            rows_lib.runs.write_rows(ready[at:at + BATCH])
        rows_s = time.perf_counter() - started
        rows_lib.close()

        floor_lib, floor_run = setup(Path(tmp) / "floor.sqlite")
        floor_lib.close()
        tuples = [outcome_values(floor_run, i, sid, o) for i, sid, o in rows]
        con = sqlite3.connect(Path(tmp) / "floor.sqlite", isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        started = time.perf_counter()
        for at in range(0, n, BATCH):
            con.execute("BEGIN")
            con.executemany(_INSERT_RESULT_VALUES, tuples[at:at + BATCH])
            con.execute("COMMIT")
        floor_s = time.perf_counter() - started
        con.close()
    print(f"{n:,} result rows in transactions of {BATCH:,}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    print(f"{'raw sqlite3 floor':<28} {n / floor_s:9,.0f} rows/s (tuples ready, no conversion)")
    print(f"{'store write_rows':<28} {n / rows_s:9,.0f} rows/s = {rows_s / floor_s:4.2f}x the floor's time "
          "(the same tuples; foreign keys checked)")
    print(f"{'store write_results':<28} {n / store_s:9,.0f} rows/s = {store_s / floor_s:4.2f}x the floor's time "
          "(includes turning each Outcome into its row)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
