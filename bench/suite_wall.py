"""The README's test command (the default suite): wall time and CPU, this tree against a base tree.

Each round runs ``python -m pytest -p no:randomly --durations=0`` in a child process of each tree
(``--base`` first, then this one; trees alternate over ``--rounds``), with ``CI=true`` and
``QT_QPA_PLATFORM=offscreen`` as ``.ci/run`` has them, and prints for each:

- wall time, and the load average before and after (the machine is shared: wall moves with it);
- CPU, user + sys of the pytest process and every child it waited for (``wait4``): what the run
  costs whatever the load; a PostgreSQL server is daemonized by ``pg_ctl`` and not counted;
- the per-test durations summed (``--durations=0``: setup, call and teardown of each test);
- the estimate for an idle two-core machine, ``CPU / 2``: a floor that holds when the run keeps
  both cores busy, which xdist's two workers do (a serial run cannot go below its own CPU);
- the pass / fail line.

Each tree uses its own ``.venv`` (``python3 -m venv .venv && .venv/bin/pip install -e '.[test,ray]'``)
and the platforms' packages (``bash .ci/platforms.sh``). Run:
``python bench/suite_wall.py --base /path/to/a/checkout/of/the/base [--rounds 1] [-- extra pytest args]``
(about an hour a round at load 6-10 on two shared cores; the output also goes to ``--log``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORES = 2  # the project's rule: the default suite within 10 minutes on two cores
DURATION = re.compile(r"^([0-9.]+)s (?:call|setup|teardown) ", re.MULTILINE)
FILE_DURATION = re.compile(r"^([0-9.]+)s (?:call|setup|teardown) +([^:\s]+)::", re.MULTILINE)
SUMMARY = re.compile(r"^=+ (.*(?:passed|failed).*) in [0-9.]+s.*=+$", re.MULTILINE)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run_suite(tree: Path, extra: list[str], log: Path) -> dict[str, object]:
    """One run of the suite in ``tree`` with its own interpreter; the figures above."""
    env = {**os.environ, "CI": "true", "QT_QPA_PLATFORM": "offscreen", "STUDIO_REQUIRE_PLATFORMS": "1"}
    command = [str(tree / ".venv" / "bin" / "python"), "-m", "pytest", "-p", "no:randomly", "--durations=0",
               "--durations-min=0", *extra]
    before = load()
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    text = log.read_text(errors="replace")
    summary = SUMMARY.findall(text)
    return {"tree": str(tree), "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "durations": sum(float(d) for d in DURATION.findall(text)), "load": f"{before} -> {load()}",
            "exit": os.waitstatus_to_exitcode(status), "summary": summary[-1] if summary else "(no summary)"}


def file_seconds(text: str) -> dict[str, float]:
    """Each test file's durations summed (``--durations=0``), longest first: the order
    tests/conftest.py hands the files to xdist's workers (``tests/file_seconds.json``)."""
    totals: dict[str, float] = {}
    for seconds, name in FILE_DURATION.findall(text):
        totals[name] = totals.get(name, 0.0) + float(seconds)
    return {name: round(total, 1) for name, total in sorted(totals.items(), key=lambda kv: -kv[1])}


def show(label: str, row: dict[str, object]) -> None:
    wall, cpu = float(row["wall"]), float(row["cpu"])  # type: ignore[arg-type]
    print(f"{label}: wall {wall / 60:.1f} min, CPU {cpu / 60:.1f} min (idle {CORES}-core estimate "
          f"{cpu / CORES / 60:.1f} min), durations summed {float(row['durations']) / 60:.1f} min, "  # type: ignore[arg-type]
          f"load {row['load']}, exit {row['exit']}: {row['summary']}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="a checkout of the tree before, with its own .venv")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--log", type=Path, default=Path("/tmp/bench-suite-wall"), help="where each run's output goes")
    parser.add_argument("--write-file-seconds", type=Path, metavar="JSON",
                        help="write this tree's seconds a test file there (tests/file_seconds.json)")
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    args.log.mkdir(parents=True, exist_ok=True)
    trees = ([("base", args.base.resolve())] if args.base else []) + [("this", ROOT)]
    results: dict[str, list[dict[str, object]]] = {label: [] for label, _ in trees}
    for round_ in range(args.rounds):
        for label, tree in trees if round_ % 2 == 0 else list(reversed(trees)):
            row = run_suite(tree, args.extra, args.log / f"{label}-{round_}.txt")
            results[label].append(row)
            show(f"round {round_ + 1} {label} ({tree})", row)
    if args.write_file_seconds:
        text = (args.log / f"this-{args.rounds - 1}.txt").read_text(errors="replace")
        args.write_file_seconds.write_text(json.dumps(file_seconds(text), indent=0) + "\n")
    if args.base:
        best = {label: min(rows, key=lambda r: float(r["wall"])) for label, rows in results.items()}  # type: ignore[arg-type]
        for key in ("wall", "cpu"):
            ratio = float(best["this"][key]) / float(best["base"][key])  # type: ignore[arg-type]
            print(f"this / base, {key} (best of {args.rounds}): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
