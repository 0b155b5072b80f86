"""Function graders that wait: 640 samples of a grader that sleeps 50 ms, concurrency 32.

Two forms of the same promptfoo-contract grader, each through the sandboxed engine end to end
(results persisted): a plain ``def`` that calls ``time.sleep`` (overlaps across worker processes:
no threads inside the sandbox) and an ``async def`` that awaits ``asyncio.sleep`` (overlaps inside
a few workers, one event loop each). Ideal: samples x 50 ms / 32. Reported: wall time from the run's
start (pool start included) and from its first stored result (worker start-up excluded), the
workers started, and errors.

Target: both forms within 1.5x of the ideal, no errors. Run: ``python bench/slow_graders.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from studio.core.engine.runner import Progress, RunOptions, run_grader
from studio.core.models import FunctionGrader, Sample
from studio.core.sandbox.pool import shared_pool
from studio.core.store import Library

SLEEP_S = 0.05
CONCURRENCY = 32
TARGET_RATIO = 1.5

SOURCES = {
    "time.sleep": """import time

def get_assert(output, context):
    time.sleep(0.05)
    return 1.0 if output.strip() == str(context["vars"].get("expected", "")).strip() else 0.0
""",
    "async asyncio.sleep": """import asyncio

async def get_assert(output, context):
    await asyncio.sleep(0.05)
    return 1.0 if output.strip() == str(context["vars"].get("expected", "")).strip() else 0.0
""",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=640)
    args = parser.parse_args()
    n = args.samples
    ideal = n * SLEEP_S / CONCURRENCY
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        library = Library.open(Path(tmp) / "bench.sqlite")
        library.datasets.create("bench", [Sample(id=f"s{i}", completion=str(i), expected=str(i)) for i in range(n)])
        for number, (label, source) in enumerate(SOURCES.items()):
            key = f"sleepy{number}"
            library.graders.create(FunctionGrader(key=key, contract="promptfoo", source=source))
            pool = shared_pool()  # the pool a run uses; its spares are already starting
            before = pool.started
            first: list[float] = []

            def watch(progress: Progress, first: list[float] = first) -> None:
                if not first and progress.done:
                    first.append(time.perf_counter())

            started = time.perf_counter()
            info = run_grader(library, key, "bench", RunOptions(concurrency=CONCURRENCY), on_progress=watch)
            seconds = time.perf_counter() - started
            steady = seconds - (first[0] - started) if first else seconds
            rows.append((label, seconds, steady, info.counts, shared_pool().started - before))
        library.close()

    print(f"{n} samples, a grader sleeping {SLEEP_S * 1000:.0f} ms, concurrency {CONCURRENCY}: ideal {ideal:.3f} s")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    verdicts = []
    for label, seconds, steady, counts, started_workers in rows:
        ok = counts.get("ok", 0)
        ratio = seconds / ideal
        verdicts.append(ratio <= TARGET_RATIO and ok == n)
        print(f"{label:<20} {seconds:6.3f} s = {ratio:4.2f}x ideal (target <= {TARGET_RATIO}x); "
              f"from the first result {steady:6.3f} s; {ok}/{n} ok; {started_workers} workers started")
    print("PASS" if all(verdicts) else "FAIL")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
