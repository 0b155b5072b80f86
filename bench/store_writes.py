"""The store's result write path against a raw ``sqlite3`` floor, in one process, same schema.

1. ``RunRepository.write_results``: (idx, sample id, Outcome) rows in batches of 2,000, what the
   engine's writer hands it; and ``write_rows`` with the row tuples ready (the store's own cost)
2. the floor: the same rows as ready-made tuples, ``executemany`` on a bare ``sqlite3`` connection
   to a library file with the same schema and indexes, one transaction per 2,000 rows

Prints rows/s and the ratio. Run: ``python bench/store_writes.py [--rows N]``.

``--variants``: the insert of a built-in run's plain row itself, each variant on a fresh library
file in the same process, alternated over ``--rounds`` rounds (best of each: the machine is
shared), CPU (this process's user + sys) and wall a row: the statement as the store binds it
(narrow, ``INSERT OR REPLACE``, transactions of 2,000) against plain ``INSERT`` and ``ON CONFLICT
DO NOTHING``, every column bound (with and without the store's None adapter), each secondary index
left out in turn and all four, the score index as (run_id, score, sample_idx), transactions of 500
and 10,000, ``PRAGMA cache_size`` 16 and 64 MB, and a ``WITHOUT ROWID`` results table keyed
(run_id, sample_idx). Rows as a run writes them: ids ``s0``..., scores 1.0/0.0 (six in seven
pass), one duration a batch. Run: ``python bench/store_writes.py --variants [--rows N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from studio.core.models import BuiltinGrader, Outcome, Sample
from studio.core.store import Library
from studio.core.store.runs import _INSERT_PLAIN, _INSERT_RESULT_VALUES, outcome_values

BATCH = 2000

SECONDARY = {"score": "(run_id, score)", "status": "(run_id, status)", "duration": "(run_id, duration_ms)",
             "sample": "(run_id, sample_id)"}
WITHOUT_ROWID = """CREATE TABLE results (run_id INTEGER NOT NULL, sample_idx INTEGER NOT NULL,
    sample_id VARCHAR NOT NULL, status VARCHAR NOT NULL, score FLOAT, scores TEXT, rationale TEXT, details TEXT,
    error TEXT, raw TEXT, duration_ms FLOAT NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0, cached BOOLEAN NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, sample_idx)) WITHOUT ROWID"""
NONE_ADAPTER = (type(None), sqlite3.PrepareProtocol)

#: label -> options of one variant (``variant``)
VARIANTS: dict[str, dict[str, object]] = {
    "as stored: 5 indexes, OR REPLACE, 6 bound, tx 2,000": {},
    "INSERT (no OR REPLACE)": {"statement": _INSERT_PLAIN.replace(" OR REPLACE", "")},
    "INSERT ... ON CONFLICT DO NOTHING": {
        "statement": _INSERT_PLAIN.replace(" OR REPLACE", "") + " ON CONFLICT (run_id, sample_idx) DO NOTHING"},
    "all 15 columns bound, None adapter": {"full": True},
    "all 15 columns bound, no None adapter": {"full": True, "adapter": False},
    "no secondary index (grid unsorted: not an option)": {"keep": ()},
    "without the score index": {"keep": ("status", "duration", "sample")},
    "without the status index": {"keep": ("score", "duration", "sample")},
    "without the duration index": {"keep": ("score", "status", "sample")},
    "without the sample_id index": {"keep": ("score", "status", "duration")},
    "score index (run_id, score, sample_idx)": {"score3": True},
    "transactions of 500": {"batch": 500},
    "transactions of 10,000": {"batch": 10_000},
    "cache_size 16 MB": {"cache": -16_384},
    "cache_size 64 MB": {"cache": -65_536},
    "wal_autocheckpoint 10,000 pages (default 1,000)": {"autocheckpoint": 10_000},
    "WITHOUT ROWID (run_id, sample_idx), 4 indexes": {"without_rowid": True},
    "WITHOUT ROWID, no secondary index": {"without_rowid": True, "keep": ()},
}


def plain_rows(run_id: int, n: int) -> list[tuple[object, ...]]:
    """A built-in run's plain rows as ``write_rows`` binds them (``_PLAIN_COLUMNS``)."""
    rng = random.Random(1)
    rows: list[tuple[object, ...]] = []
    for at in range(0, n, BATCH):
        ms = rng.random() * 0.01  # one duration a batch, as the engine's text lane writes it
        rows.extend((run_id, i, f"s{i}", 0.0 if i % 7 == 6 else 1.0, '{"exact": ' + ("0.0}" if i % 7 == 6 else "1.0}"), ms)
                    for i in range(at, min(at + BATCH, n)))
    return rows


def variant(tmp: Path, n: int, *, keep: tuple[str, ...] = tuple(SECONDARY), score3: bool = False,
            without_rowid: bool = False, statement: str = _INSERT_PLAIN, full: bool = False, adapter: bool = True,
            batch: int = BATCH, cache: int | None = None, autocheckpoint: int | None = None) -> tuple[float, float]:
    """(CPU, wall) seconds of writing ``n`` plain rows in one variant, on a fresh library file."""
    path = tmp / "variant.sqlite"
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    lib, run_id = setup(path)
    lib.close()
    con = sqlite3.connect(path, isolation_level=None)
    for name in SECONDARY:
        con.execute(f"DROP INDEX ix_results_run_{name}")
    if without_rowid:
        con.execute("DROP TABLE results")
        con.execute(WITHOUT_ROWID)
    for name in keep:
        columns = "(run_id, score, sample_idx)" if name == "score" and score3 else SECONDARY[name]
        con.execute(f"CREATE INDEX ix_results_run_{name} ON results {columns}")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    if cache is not None:
        con.execute(f"PRAGMA cache_size={cache}")
    if autocheckpoint is not None:
        con.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
    rows = plain_rows(run_id, n)
    if full:
        statement = _INSERT_RESULT_VALUES
        rows = [(r[0], r[1], r[2], "ok", r[3], r[4], None, None, None, None, r[5], 0, 0, 0, 0) for r in rows]
    saved = sqlite3.adapters.pop(NONE_ADAPTER, None) if not adapter else None
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        for at in range(0, n, batch):
            con.execute("BEGIN IMMEDIATE")
            con.executemany(statement, rows[at:at + batch])
            con.execute("COMMIT")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        if saved is not None:
            sqlite3.adapters[NONE_ADAPTER] = saved
    con.close()
    return cpu, wall


def variants(n: int, rounds: int, only: list[str] | None = None) -> int:
    chosen = {label: options for label, options in VARIANTS.items()
              if only is None or label == next(iter(VARIANTS)) or any(word in label for word in only)}
    best: dict[str, tuple[float, float]] = {}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for label, options in chosen.items():
                cpu, wall = variant(Path(tmp), n, **options)  # type: ignore[arg-type]
                old = best.get(label)
                best[label] = (min(cpu, old[0]), min(wall, old[1])) if old else (cpu, wall)
            loads.append(os.getloadavg()[0])
    print(f"{n:,} plain result rows a variant, best of {rounds} alternated rounds; load average "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    ref_cpu = best[next(iter(chosen))][0]
    for label, (cpu, wall) in best.items():
        print(f"{label:<52} {cpu / n * 1e6:6.2f} us CPU a row ({cpu / ref_cpu:5.2f}x)  {wall / n * 1e6:6.2f} us wall")
    return 0


def setup(path: Path) -> tuple[Library, int]:
    lib = Library.open(path)
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("d", [Sample(id="s0", completion="a", expected="a")])
    run = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, 0)
    return lib, run.id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--variants", action="store_true", help="the insert's variants (see above)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="with --variants: those whose label holds one of these words "
                        "(and the first, the reference)")
    args = parser.parse_args()
    n = args.rows
    if args.variants:
        return variants(n, args.rounds, args.only)
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
