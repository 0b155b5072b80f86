"""Throughput of an exact-match Adaptive function grader over 20,000 samples, three ways in one run.

1. plain in-process loop (the limit: no isolation at all)
2. the sandboxed engine end to end: warm pool, batches of up to 2,048, results persisted by the engine's
   runner into a fresh SQLite library
3. one fresh sandboxed process per sample (the naive design), measured on a few hundred samples
   and extrapolated

Run: ``python bench/sandbox_throughput.py [--samples N] [--naive N]``; prints samples/s and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox import sandbox_info
from studio.core.sandbox.launch import GUEST_DIR, plan_worker
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.process import WorkerProcess
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.sandbox.session import GraderSpec
from studio.core.scoring import GradingContext

SOURCE = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    completion = thread.completion() or ""
    expected = thread.metadata.get("expected", "")
    return 1.0 if completion.strip() == expected.strip() else 0.0
"""


def make_samples(n: int) -> list[Sample]:
    return [
        Sample(
            id=f"s{i}",
            messages=[Turn(role="user", content=f"What is {i} + {i}?")],
            completion=str(2 * i if i % 5 else i),
            expected=str(2 * i),
        )
        for i in range(n)
    ]


def plain_loop(samples: list[Sample]) -> float:
    sys.path.insert(0, str(GUEST_DIR / "shims"))
    from adaptive_harmony import StringThread

    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, "grader.py", "exec"), namespace)
    grade = namespace["grade"]
    start = time.perf_counter()
    total = 0.0
    for s in samples:
        thread = StringThread([(t.role, t.content) for t in s.messages] + [("assistant", s.completion or "")],
                              metadata={"expected": s.expected})
        coro = grade(thread)
        try:
            coro.send(None)
        except StopIteration as stop:
            total += stop.value
    return time.perf_counter() - start


def engine_end_to_end(samples: list[Sample]) -> tuple[float, str]:
    """Library + dataset prepared first (not timed: that is import, not grading); the run is timed
    from pool start to the last result committed."""
    from studio.core.engine.runner import run_grader
    from studio.core.sandbox import close_shared_pool
    from studio.core.store import Library

    close_shared_pool()
    with tempfile.TemporaryDirectory() as tmp:
        library = Library.open(Path(tmp) / "bench.sqlite")
        try:
            library.graders.create(FunctionGrader(key="exact", source=SOURCE))
            library.datasets.create("bench", samples)
            start = time.perf_counter()
            info = run_grader(library, "exact", "bench")
            elapsed = time.perf_counter() - start
            assert info.done == len(samples) and info.counts.get("ok") == len(samples), info
        finally:
            library.close()
    return elapsed, "engine run with results persisted (pool start included)"


def cli_end_to_end(samples: list[Sample]) -> float:
    """``grader-studio run`` as a user types it: interpreter and CLI start-up, sandbox, storage."""
    import subprocess

    from studio.core.store import Library

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "cli.sqlite"
        with Library.open(db) as library:
            library.graders.create(FunctionGrader(key="exact", source=SOURCE))
            library.datasets.create("bench", samples)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "studio", "--db", str(db), "run", "exact", "bench", "--json"],
                       check=True, capture_output=True)
        return time.perf_counter() - start


def engine_floor(samples: list[Sample]) -> float:
    """The same engine run with the in-process built-in exact_match: what storage alone costs."""
    from studio.core.engine.runner import run_grader
    from studio.core.models import BuiltinGrader
    from studio.core.store import Library

    with tempfile.TemporaryDirectory() as tmp:
        library = Library.open(Path(tmp) / "floor.sqlite")
        try:
            library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
            library.datasets.create("bench", samples)
            start = time.perf_counter()
            run_grader(library, "exact", "bench")
            return time.perf_counter() - start
        finally:
            library.close()


def scorer_only(samples: list[Sample]) -> float:
    pool = WorkerPool()
    start = time.perf_counter()
    pool.warm()
    scorer = FunctionScorer(FunctionGrader(key="exact", source=SOURCE), GradingContext(options={"sandbox_pool": pool}))

    async def go() -> int:
        size = scorer.batch_size or len(samples)
        batches = [samples[i : i + size] for i in range(0, len(samples), size)]
        sem = asyncio.Semaphore(scorer.parallel_batches)

        async def one(batch: list[Sample]) -> int:
            async with sem:
                return len(await scorer.score_batch(batch))

        return sum(await asyncio.gather(*(one(b) for b in batches)))

    done = asyncio.run(go())
    elapsed = time.perf_counter() - start
    scorer.close()
    pool.close()
    assert done == len(samples)
    return elapsed


def process_per_sample(samples: list[Sample]) -> float:
    from studio.core.sandbox import payloads
    from studio.core.sandbox.settings import SandboxSettings

    settings = SandboxSettings()
    request = GraderSpec.of(FunctionGrader(key="exact", source=SOURCE), settings).load_request()
    start = time.perf_counter()
    for sample in samples:
        worker = WorkerProcess(plan_worker(settings))
        worker.load(request, timeout=10, start_timeout=10)
        reply = worker.grade(payloads.build("adaptive", [sample]), timeout=10)
        assert reply.failure is None
        worker.kill()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--naive", type=int, default=200, help="samples for the process-per-sample run")
    args = parser.parse_args()
    info = sandbox_info()
    print(f"sandbox: {info.mode}, worker uid {info.worker_uid}, "
          f"{sum(p.active for p in info.protections)}/{len(info.protections)} protections active")
    samples = make_samples(args.samples)

    plain = plain_loop(samples)
    engine, how = engine_end_to_end(samples)
    cli = cli_end_to_end(samples)
    floor = engine_floor(samples)
    scorer = scorer_only(samples)
    naive_n = min(args.naive, args.samples)
    naive = process_per_sample(samples[:naive_n]) * args.samples / naive_n

    n = args.samples
    rows = [
        ("plain in-process loop", plain),
        (f"sandboxed: {how}", engine),
        ("sandboxed: `grader-studio run` end to end (CLI start-up included)", cli),
        ("sandboxed: scorer only (pool start included)", scorer),
        ("no sandbox: same engine run, built-in exact_match in-process", floor),
        (f"one sandboxed process per sample (extrapolated from {naive_n})", naive),
    ]
    print(f"{n} samples, exact-match Adaptive function grader")
    for label, seconds in rows:
        print(f"  {label:<72} {seconds:8.3f} s  {n / seconds:>12,.0f} samples/s")
    print(f"  sandboxed end to end is {engine / plain:,.1f}x slower than the plain loop")
    print(f"  and {naive / engine:,.0f}x faster than a process per sample "
          f"(scorer only: {naive / scorer:,.0f}x)")
    target = 50_000
    verdict = "meets" if n / cli >= target else "misses"
    print(f"  target {target:,} samples/s end to end (CLI): {verdict} ({n / cli:,.0f}; engine alone {n / engine:,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
