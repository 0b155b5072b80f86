"""Every judge kind at its concurrency: 640 samples, 50 ms a call, 32 calls in flight.

The scripted judge server (``grader-studio fake-judge --latency-ms 50``, not a model) runs in its own
process. Each kind runs through the engine end to end (``run_grader``: batches, results written to
SQLite) with ``use_cache=False``; its calls are counted afterwards from the response cache (a fresh
answer is still stored), so the ideal is calls x 50 ms / 32 whatever the kind makes per sample
(a range judge two, a criteria judge one per criterion, a prebuilt judge several).
Start-up is excluded: one 32-sample warm-up run per kind first (imports, sockets).

Target: every kind within 1.3x of its ideal. Run: ``python bench/judge_kinds.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import (
    BinaryJudge,
    CriteriaJudge,
    Criterion,
    PrebuiltJudge,
    RangeJudge,
    RubricJudge,
    Sample,
    Turn,
)
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository
from studio.core.store.tables import judge_cache

sys.path.insert(0, str(Path(__file__).parent))
from judge_throughput import LATENCY_MS, start_server  # noqa: E402 - the same server start

CONCURRENCY = 32
TARGET_RATIO = 1.3

JUDGES = [
    BinaryJudge(key="binary", criteria="Names the correct capital.", endpoint="bench"),
    RangeJudge(key="range", criteria="How complete is the answer?", endpoint="bench"),
    RubricJudge(key="rubric", prompt="Score 1.0 for a correct capital, 0.0 otherwise.", endpoint="bench"),
    CriteriaJudge(key="criteria", endpoint="bench",
                  criteria=[Criterion(text="Names a city"), Criterion(text="Names Paris")]),
    PrebuiltJudge(key="relevancy", metric_type="answer_relevancy", endpoint="bench"),
]


def make_samples(n: int, tag: str) -> list[Sample]:
    cities = ["Paris", "Lyon", "Rome", "Madrid"]
    return [
        Sample(
            id=f"{tag}{i}",
            messages=[Turn(role="user", content=f"Question {tag}{i}: what is the capital of France?")],
            completion=f"It is {cities[i % len(cities)]} (answer {tag}{i}).",
            expected="Paris",
        )
        for i in range(n)
    ]


def cached_calls(library: Library) -> int:
    with library.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(judge_cache)).scalar_one())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=640)
    parser.add_argument("--kinds", nargs="*", help="only these grader keys (binary range rubric criteria relevancy)")
    args = parser.parse_args()
    n = args.samples
    proc, base_url = start_server()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            library = Library.open(Path(tmp) / "bench.sqlite")
            EndpointRepository.of(library).save(EndpointConfig(
                name="bench", base_url=base_url, model="fake-judge", max_concurrency=CONCURRENCY))
            library.datasets.create("warm", make_samples(32, "w"))
            library.datasets.create("main", make_samples(n, "s"))
            for judge in JUDGES:
                if args.kinds and judge.key not in args.kinds:
                    continue
                library.graders.create(judge)
                options = RunOptions(concurrency=CONCURRENCY, use_cache=False)
                run_grader(library, judge.key, "warm", options)
                before = cached_calls(library)
                cpu_before = time.process_time()
                started = time.perf_counter()
                run = run_grader(library, judge.key, "main", options)
                seconds = time.perf_counter() - started
                cpu = time.process_time() - cpu_before
                calls = cached_calls(library) - before
                ok = run.counts.get("ok", 0)
                ideal = calls * LATENCY_MS / 1000 / CONCURRENCY
                rows.append((judge.kind, calls, ok, seconds, ideal, cpu))
            library.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    print(f"{n} samples per judge kind, scripted server at {LATENCY_MS:.0f} ms/call, concurrency {CONCURRENCY}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    verdicts = []
    for kind, calls, ok, seconds, ideal, cpu in rows:
        ratio = seconds / ideal if ideal else float("inf")
        verdicts.append(ratio <= TARGET_RATIO and ok == n)
        # the CPU this process used: when other work leaves it less than a core, wall >= CPU / share
        print(f"{kind:<15} {calls:5d} calls  {ok:4d} ok  {seconds:6.3f} s  ideal {ideal:6.3f} s  "
              f"{ratio:4.2f}x ideal (target <= {TARGET_RATIO}x); CPU used {cpu:5.2f} s = "
              f"{cpu / seconds:4.0%} of the wall time")
    print("PASS" if all(verdicts) else "FAIL")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
