"""Judge throughput: 1,000 samples through a binary judge against our scripted judge server.

The server (``grader-studio fake-judge``, a scripted judge, not a model) runs in its own process
and answers every call after a fixed 50 ms; the run uses 32 calls in flight. Ideal wall time is
1000 x 50 ms / 32 = 1.5625 s. Three measurements in one run, all in a fresh library file:

1. the judge scorer alone (``score_batch`` over every sample)
2. the engine end to end (``run_grader``: batches, results written to SQLite)
3. the same engine run again: every answer comes from the response cache (target < 1 s)

Targets: (1) and (2) within 1.3x of ideal. Run: ``python bench/judge_throughput.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.graders.registry import make_scorer
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.scoring import GradingContext
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

LATENCY_MS = 50.0
CONCURRENCY = 32
TARGET_RATIO = 1.3
CACHED_TARGET_S = 1.0


def make_samples(n: int) -> list[Sample]:
    cities = ["Paris", "Lyon", "Rome", "Madrid"]
    return [
        Sample(
            id=f"s{i}",
            messages=[Turn(role="user", content=f"Question {i}: what is the capital of France?")],
            completion=f"It is {cities[i % len(cities)]} (answer {i}).",
            expected="Paris",
        )
        for i in range(n)
    ]


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "studio",
            "fake-judge",
            "--port",
            "0",
            "--no-reward",
            "--latency-ms",
            str(LATENCY_MS),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()  # type: ignore[union-attr]
    return proc, line.strip().rsplit(" ", 1)[-1]


async def raw_floor(base_url: str, n: int) -> float:
    """The machine's floor right now: n POSTs over 32 raw keep-alive sockets, no HTTP library."""
    host, port = base_url.split("//", 1)[1].split("/", 1)[0].split(":")
    body = b'{"model":"fake-judge","messages":[{"role":"user","content":"Say OK"}]}'
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    left = n

    async def worker() -> None:
        nonlocal left
        reader, writer = await asyncio.open_connection(host, int(port))
        while left > 0:
            left -= 1
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started


async def scorer_only(
    library: Library, judge: BinaryJudge, samples: list[Sample]
) -> tuple[float, int]:
    scorer = make_scorer(
        judge, GradingContext(library=library, concurrency=CONCURRENCY, use_cache=False)
    )
    started = time.perf_counter()
    outcomes = await scorer.score_batch(samples)
    elapsed = time.perf_counter() - started
    await scorer.aclose()
    return elapsed, sum(o.status == "ok" for o in outcomes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    n = args.samples
    ideal = n * LATENCY_MS / 1000 / CONCURRENCY
    proc, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            library = Library.open(Path(tmp) / "bench.sqlite")
            config = EndpointConfig(
                name="bench", base_url=base_url, model="fake-judge", max_concurrency=CONCURRENCY
            )
            EndpointRepository.of(library).save(config)
            judge = BinaryJudge(
                key="capital", criteria="Names the correct capital.", endpoint="bench"
            )
            samples = make_samples(n)
            library.graders.create(judge)
            library.datasets.create("capitals", samples)

            asyncio.run(scorer_only(library, judge, samples[:64]))  # warm-up: imports, sockets
            floor_s = asyncio.run(raw_floor(base_url, n))
            scorer_s, ok = asyncio.run(scorer_only(library, judge, samples))
            assert ok == n, f"only {ok}/{n} samples graded"

            started = time.perf_counter()
            run = run_grader(
                library, "capital", "capitals", RunOptions(concurrency=CONCURRENCY, use_cache=False)
            )
            engine_s = time.perf_counter() - started
            assert run.status == "completed" and run.done == n, run

            started = time.perf_counter()
            cached = run_grader(library, "capital", "capitals", RunOptions(concurrency=CONCURRENCY))
            cached_s = time.perf_counter() - started
            assert cached.done == n
            library.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    load = os.getloadavg()[0]
    print(
        f"{n} samples, binary judge, scripted server at {LATENCY_MS:.0f} ms/call, concurrency {CONCURRENCY}"
    )
    print(f"machine: {os.cpu_count()} cores, load average {load:.2f} (other work slows every row)")
    print(f"{'ideal':<23} {ideal:6.3f} s")
    print(
        f"{'floor (raw sockets)':<23} {floor_s:6.3f} s  {floor_s / ideal:4.2f}x ideal  (no HTTP library, now)"
    )
    verdicts = []
    for label, seconds in (("judge scorer", scorer_s), ("engine end to end", engine_s)):
        ratio = seconds / ideal
        verdicts.append(ratio <= TARGET_RATIO)
        print(
            f"{label:<23} {seconds:6.3f} s  {ratio:4.2f}x ideal  (target <= {TARGET_RATIO}x)"
            f"  {seconds / floor_s:4.2f}x floor"
        )
    verdicts.append(cached_s < CACHED_TARGET_S)
    print(f"{'engine, cached re-run':<23} {cached_s:6.3f} s  (target < {CACHED_TARGET_S:g} s)")
    print("PASS" if all(verdicts) else "FAIL")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
