"""Generation against a bare HTTP client: ``generate`` (engine/generate.py) for the same calls.

One scripted server (``grader-studio fake-judge --model-under-test``, canned answers, not a model)
in a child process answers every call after 50 ms. Measured in this process, alternating, best of
``--repeat`` each:

1. **bare client**: asyncio streams, HTTP/1.1 keep-alive, ``--concurrency`` connections, sending the
   very bodies ``generate`` sends (built by the endpoint's adapter from the generation's own
   requests) and reading each answer whole; nothing parsed, nothing written (bench/judge_path.py's).
2. **judge client alone**: the same requests through the studio's judge client (the path every judge
   call takes), answers parsed, nothing stored: what generation costs before it stores anything.
3. **generate**: ``studio.core.engine.generate.generate`` over the same dataset and endpoint, from
   the call to its return: planning, the judge client (pool, limits), parsing each answer, the
   writer thread committing answers as they arrive, the final reorder and provenance.

The figure is generate / bare (issue 37's goal: <= 1.3x); the ideal (calls x latency / concurrency)
and the load average are printed with it. Run: ``python bench/generate.py [--samples 640]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

LATENCY_MS = 50


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "studio", "fake-judge", "--port", "0", "--no-reward", "--model-under-test",
         "--latency-ms", str(LATENCY_MS)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    line = proc.stdout.readline()  # type: ignore[union-attr]
    return proc, line.strip().rsplit(" ", 1)[-1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=640)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import judge_path  # the bare client of issue 25's bench

    from studio.core.datasets import read_dataset
    from studio.core.engine.generate import GenerationSettings, endpoint_config, generate, plan
    from studio.core.judges.http.adapters import adapter_for
    from studio.core.judges.http.cache import request_body
    from studio.core.judges.http.client import JudgeClient
    from studio.core.models.endpoints import EndpointConfig
    from studio.core.store import Library
    from studio.core.store.endpoints import EndpointRepository

    judge_path.CONCURRENCY = args.concurrency
    server, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            library = Library.open(Path(tmp) / "bench.sqlite")
            source = read_dataset(ROOT / "resources/demo/datasets/qa.jsonl").samples
            samples = [s.model_copy(update={"id": f"s{i:05d}"}) for i, s in
                       ((i, source[i % len(source)]) for i in range(args.samples))]
            library.datasets.create("bench", samples)
            EndpointRepository.of(library).save(EndpointConfig(
                name="bench", base_url=base_url, model="scripted-model-a", max_concurrency=args.concurrency,
                timeout=30.0))
            settings = GenerationSettings(source="bench", endpoint="bench", max_tokens=64)
            config = endpoint_config(library, "bench")
            _, pending = plan(library, settings, config)
            jobs = list(pending)
            adapter = adapter_for(config)
            bodies = [request_body(adapter.payload(config, config.model, job.request)) for job in jobs]
            calls = len(bodies)
            ideal = calls * LATENCY_MS / 1000 / args.concurrency
            asyncio.run(judge_path.bare_client(base_url, bodies[: args.concurrency * 2]))  # warm the server

            async def client_alone() -> float:
                """The same requests through the studio's judge client, answers parsed, nothing stored."""
                client = JudgeClient(config, cache=None, use_cache=False)
                pending = iter(jobs)

                async def worker() -> None:
                    for job in pending:
                        await client.chat(job.request)

                started = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(args.concurrency)))
                elapsed = time.perf_counter() - started
                await client.aclose()
                return elapsed

            bare_times, client_times, gen_times, cpu = [], [], [], []
            for n in range(args.repeat):
                bare_times.append(asyncio.run(judge_path.bare_client(base_url, bodies)))
                client_times.append(asyncio.run(client_alone()))
                before = resource.getrusage(resource.RUSAGE_SELF)
                started = time.perf_counter()
                result = generate(library, f"out-{n}", settings)
                gen_times.append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_SELF)
                cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / calls)
                assert result.status == "complete" and result.stored == calls, result
            library.close()
    finally:
        server.terminate()
        server.wait()
    bare, gen, alone = min(bare_times), min(gen_times), min(client_times)
    print(json.dumps({
        "calls": calls, "concurrency": args.concurrency, "latency_ms": LATENCY_MS, "load": os.getloadavg()[0],
        "ideal_s": round(ideal, 3), "bare_s": [round(t, 3) for t in bare_times],
        "judge_client_s": [round(t, 3) for t in client_times], "generate_s": [round(t, 3) for t in gen_times], "generate_cpu_us_a_call": [round(c * 1e6) for c in cpu],
    }))
    print(f"{calls} calls, concurrency {args.concurrency}, {LATENCY_MS} ms a call (ideal {ideal:.2f} s), "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"bare client {bare:.2f} s ({bare / ideal:.2f}x ideal); generate {gen:.2f} s ({gen / ideal:.2f}x ideal)")
    print(f"the studio's judge client alone (same requests, nothing stored) {alone:.2f} s: {alone / bare:.2f}x bare")
    print(f"generate / bare: {gen / bare:.2f}x (goal <= 1.3x); generate's CPU a call: {min(cpu) * 1e6:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
