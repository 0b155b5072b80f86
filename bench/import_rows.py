"""Importing a big JSONL file: ``grader-studio datasets import`` on 300,000 Adaptive rows (issue 38).

Measured in child processes (wall time, CPU time = user + sys, and peak RSS from the kernel's
accounting of each child), alternated round by round, best of ``--rounds``:

1. the floor: a bare script that ``json.loads`` every line and inserts the line with ``sqlite3``
   ``executemany`` in one transaction (no shapes, no validation); and the same with ``orjson.loads``
   (the JSON library the import writes its stored text with), so the ratio is to the best floor
2. the import as a user runs it, CLI start-up included, into a library made just before by
   ``grader-studio datasets list`` (untimed: making a library is the same cost whatever the file):
   rows/s and peak RSS; then a one-row import into the same library, the start-up alone, so the
   rows' own rate is shown too ((rows) / (import - start-up))
3. with ``--base DIR`` (once or more): the same from another checkout (its own ``.venv``), e.g. the
   base commit of an issue, so "before" and "after" are measured in the same run under the same load

Every studio tree timed is byte-compiled first and its children run without
``PYTHONDONTWRITEBYTECODE`` (an installed studio has its bytecode; see ``bench/startup.py``).

Targets (issue 38): >= 100,000 rows/s and < 150 MB peak. Run:
``python bench/import_rows.py [--rows 300000] [--rounds 3] [--base ../base]``; ``--rows 1000000`` for
the earlier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATE = 100_000
TARGET_MB = 150

FLOOR = """
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.execute("CREATE TABLE s (idx INTEGER, sample_id TEXT, data TEXT)")
loads = json.loads
if sys.argv[3:] == ["orjson"]:
    import orjson
    loads = orjson.loads
with open(sys.argv[1], encoding="utf-8") as fh, db:
    chunk = []
    for n, line in enumerate(fh):
        row = loads(line)
        chunk.append((n, row["id"], line))
        if len(chunk) >= 5000:
            db.executemany("INSERT INTO s VALUES (?, ?, ?)", chunk)
            chunk = []
    db.executemany("INSERT INTO s VALUES (?, ?, ?)", chunk)
"""


def write_file(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(rows):
            fh.write(json.dumps({
                "id": f"s{i}",
                "messages": [{"role": "user", "content": f"What is {i} + {i}?"}],
                "completion": str(2 * i if i % 5 else i),
                "metadata": {"expected": str(2 * i)},
            }) + "\n")


def timed_child(argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None
                ) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one child process run to completion."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{argv[:4]} failed ({status})")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000, help="rows in the file (1000000: the earlier figure)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds; the best of each is reported")
    parser.add_argument("--base", action="append", default=[],
                        help="a checkout with its own .venv to measure alongside (the 'before'); may be repeated")
    args = parser.parse_args()
    n = args.rows
    here = str(Path(__file__).resolve().parent.parent)
    contenders: list[tuple[str, str, str]] = [("grader-studio import", sys.executable, here)]
    for given in args.base:
        base = Path(given).resolve()
        contenders.append((f"base {base.name} import", str(base / ".venv" / "bin" / "python"), str(base)))
    for _, python, tree in contenders:
        subprocess.run([python, "-m", "compileall", "-q", str(Path(tree) / "studio")], check=True,
                       stdout=subprocess.DEVNULL)
    compiled_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best: dict[str, tuple[float, float, float]] = {}
    loads: list[float] = []

    def keep(label: str, got: tuple[float, float, float]) -> None:
        old = best.get(label)
        best[label] = got if old is None else (min(old[0], got[0]), min(old[1], got[1]), max(old[2], got[2]))

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "big.jsonl"
        write_file(data, n)
        one = Path(tmp) / "one.jsonl"
        write_file(one, 1)
        print(f"{n:,} JSONL rows (Adaptive shape), {data.stat().st_size / 1e6:.0f} MB; "
              f"machine: {os.cpu_count()} cores", flush=True)
        for r in range(args.rounds):
            order = [("floor (json + sqlite3)", sys.executable, here),
                     ("floor (orjson + sqlite3)", sys.executable, here)] + contenders
            if r % 2:
                order = order[:2] + order[2:][::-1]
            for label, python, cwd in order:
                for stale in Path(tmp).glob("*.sqlite*"):
                    stale.unlink()
                load = os.getloadavg()[0]
                loads.append(load)
                if label.startswith("floor"):
                    got = timed_child([python, "-c", FLOOR, str(data), str(Path(tmp) / "floor.sqlite"),
                                       *(["orjson"] if "orjson" in label else [])])
                else:
                    env = {**compiled_env, "GRADER_STUDIO_DB": str(Path(tmp) / "lib.sqlite")}
                    cli = [python, "-m", "studio", "datasets"]
                    timed_child([*cli, "list"], env=env, cwd=cwd)
                    got = timed_child([*cli, "import", str(data), "--name", "big"], env=env, cwd=cwd)
                    start = timed_child([*cli, "import", str(one), "--name", "one"], env=env, cwd=cwd)
                    keep(f"{label} start-up", start)
                    print(f"  round {r + 1} load {load:5.2f}  {label + ' start-up':<28} {start[0]:6.2f} s wall "
                          f"{start[1]:6.2f} s CPU  (a one-row file)", flush=True)
                wall, cpu, mb = got
                print(f"  round {r + 1} load {load:5.2f}  {label:<28} {wall:6.2f} s wall {cpu:6.2f} s CPU "
                      f"{n / wall:9,.0f} rows/s ({n / cpu:9,.0f}/CPU s)  peak {mb:5.0f} MB", flush=True)
                keep(label, got)
    print(f"best of {args.rounds} (load average {min(loads):.2f}-{max(loads):.2f}, now {os.getloadavg()[0]:.2f}; "
          "other work slows every row: CPU time is the steadier figure)")
    floor_wall, floor_cpu, _ = best["floor (orjson + sqlite3)"]
    for label, (wall, cpu, mb) in best.items():
        if label.endswith("start-up"):
            continue
        ratio = "" if label.startswith("floor") else f"  {wall / floor_wall:4.2f}x wall, {cpu / floor_cpu:4.2f}x CPU the orjson floor's"
        print(f"{label:<28} {wall:6.2f} s wall {cpu:6.2f} s CPU  {n / wall:9,.0f} rows/s "
              f"({n / cpu:9,.0f}/CPU s)  peak {mb:5.0f} MB{ratio}")
        if f"{label} start-up" in best:
            s_wall, s_cpu, _ = best[f"{label} start-up"]
            print(f"{'  less its start-up':<28} {s_wall:6.2f} s wall {s_cpu:6.2f} s CPU  "
                  f"rows alone {n / max(wall - s_wall, 1e-9):9,.0f} rows/s ({n / max(cpu - s_cpu, 1e-9):9,.0f}/CPU s)")
    wall, cpu, mb = best["grader-studio import"]
    ok = n / wall >= TARGET_RATE and mb < TARGET_MB
    print(f"targets >= {TARGET_RATE:,} rows/s, < {TARGET_MB} MB: {'PASS' if ok else 'FAIL'}"
          + ("" if ok or n / cpu < TARGET_RATE else " on wall time (met on CPU time)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
