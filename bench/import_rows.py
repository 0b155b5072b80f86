"""Importing a big JSONL file: ``grader-studio datasets import`` on 1,000,000 Adaptive rows.

Measured in child processes (peak RSS from the kernel's accounting of each child):

1. the import as a user runs it (CLI start-up included): rows/s and peak RSS
2. the floor in the same run: a bare script that ``json.loads`` every line and inserts the line with
   ``sqlite3`` ``executemany`` in one transaction (no shapes, no validation)

Targets: >= 50,000 rows/s and < 300 MB peak. Run: ``python bench/import_rows.py [--rows N]``.
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

TARGET_RATE = 50_000
TARGET_MB = 300

FLOOR = """
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.execute("CREATE TABLE s (idx INTEGER, sample_id TEXT, data TEXT)")
with open(sys.argv[1], encoding="utf-8") as fh, db:
    chunk = []
    for n, line in enumerate(fh):
        row = json.loads(line)
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


def timed_child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one child process run to completion."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{argv[:4]} failed ({status})")
    return seconds, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.rows
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "big.jsonl"
        write_file(data, n)
        floor_s, floor_mb = timed_child([sys.executable, "-c", FLOOR, str(data), str(Path(tmp) / "floor.sqlite")])
        env = {**os.environ, "GRADER_STUDIO_DB": str(Path(tmp) / "lib.sqlite")}
        import_s, import_mb = timed_child(
            [sys.executable, "-m", "studio", "datasets", "import", str(data), "--name", "big"], env=env)
    rate, floor_rate = n / import_s, n / floor_s
    print(f"{n:,} JSONL rows (Adaptive shape)")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    print(f"{'floor (json + sqlite3)':<26} {floor_s:6.2f} s  {floor_rate:9,.0f} rows/s  peak {floor_mb:5.0f} MB")
    print(f"{'grader-studio import':<26} {import_s:6.2f} s  {rate:9,.0f} rows/s  peak {import_mb:5.0f} MB  "
          f"{import_s / floor_s:4.2f}x the floor (targets >= {TARGET_RATE:,}/s, < {TARGET_MB} MB)")
    ok = rate >= TARGET_RATE and import_mb < TARGET_MB
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
