"""The judge path against a bare HTTP client: ``grader-studio run`` of the binary and the range judge.

Everything is measured in one run on this machine, against one scripted judge server (``grader-studio
fake-judge``, a rule-following script, not a model) answering every call after 50 ms:

1. **bare client**: asyncio streams, HTTP/1.1 keep-alive, 32 connections, sending the very request
   bodies the studio sends (recorded from the studio's own client in a warm-up pass) and reading
   each answer whole. No HTTP library, no JSON parsing, nothing written: the floor on this machine.
2. **studio**: ``grader-studio run JUDGE DATASET --concurrency 32 --no-cache --progress-jsonl`` as
   a child process, once per judge kind. Judged: the run's own clock (the ``elapsed`` of its last
   progress event: scorers open to last result written) less the same clock of a one-sample run
   (``--limit 1``: the first prompt's template compile) and one call's latency. Printed too: wall
   time less the one-sample run's wall (interpreter start, imports), noisier under load.

The figure is studio / bare, per judge kind (issue 25's goal: <= 1.3x). The ideal (calls x latency
/ concurrency) is printed too, so both the floor's and the studio's distance from it show.

Run: ``python bench/judge_path.py [--samples 640] [--profile DIR]``; ``--profile`` records each run
with py-spy (``pip install py-spy``) into ``DIR/<kind>.svg`` (flame graphs) and ``.txt`` (top
functions), which is how bench/profiles/ was made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LATENCY_MS = 50.0
RATE_HZ = 250
CONCURRENCY = 32
TARGET = 1.3
JUDGES = {
    "binary": ROOT / "resources/demo/graders/qa-correctness-judge.grader.yaml",
    "range": ROOT / "resources/demo/graders/answer-quality-1to5.grader.yaml",
}


def cli(db: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", "--db", str(db), *args],
        capture_output=True, text=True, check=check,
    )


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "studio", "fake-judge", "--port", "0", "--no-reward",
         "--latency-ms", str(LATENCY_MS)],
        stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()  # type: ignore[union-attr]
    return proc, line.strip().rsplit(" ", 1)[-1]


def make_dataset(path: Path, n: int) -> None:
    """n samples cycled from the demo QA set, each with its own id (and so its own prompt)."""
    rows = [json.loads(line) for line in (ROOT / "resources/demo/datasets/qa.jsonl").open()]
    with path.open("w") as out:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["id"] = f"s{i:05d}"
            row["completion"] = f"{row['completion']} (variant {i})"
            out.write(json.dumps(row) + "\n")


def record_bodies(db: Path, key: str, base_url: str) -> list[bytes]:
    """The exact bodies the studio's client sends for every sample of the dataset (a warm-up pass)."""
    from studio.core.graders.registry import make_scorer
    from studio.core.scoring import GradingContext
    from studio.core.store import Library

    library = Library.open(db)
    definition = library.graders.get(key).definition
    samples = list(library.datasets.samples("bench"))
    bodies: list[bytes] = []

    async def go() -> None:
        scorer = make_scorer(
            definition,
            GradingContext(library=library, concurrency=CONCURRENCY, use_cache=False,
                           endpoint="bench"),
        )
        pool = scorer.client._pool  # type: ignore[attr-defined]
        send = pool.send

        async def recording(transport_, method, url, headers, body=b""):  # noqa: ANN001, ANN202
            if method == "POST":
                bodies.append(body)
            return await send(transport_, method, url, headers, body)

        pool.send = recording
        await scorer.score_batch(samples)
        await scorer.aclose()

    asyncio.run(go())
    library.close()
    return bodies


async def bare_client(base_url: str, bodies: list[bytes]) -> float:
    """Send every body over 32 keep-alive connections and read each answer whole."""
    hostport, _, prefix = base_url.split("//", 1)[1].partition("/")
    host, port = hostport.split(":")
    path = f"/{prefix.rstrip('/')}/chat/completions"
    queue = list(reversed(bodies))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        while queue:
            body = queue.pop()
            writer.write(
                f"POST {path} HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode() + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(
    db: Path, key: str, *extra: str, profile: Path | None = None, tree: str = ""
) -> tuple[float, float, float]:
    """(wall seconds of the whole command, seconds on the run's own clock, CPU seconds of the
    command): the second is the ``elapsed`` of the run's last progress event, from the moment its
    scorers are open to the last result written (the window's progress stream is on, as when the
    window runs it). CPU time, unlike the clocks, hardly moves with the machine's load."""
    command = [sys.executable, "-m", "studio", "--db", str(db), "run", key, "bench",
               "--endpoint", "bench", "--concurrency", str(CONCURRENCY), "--no-cache",
               "--progress-jsonl", *extra]
    if profile is not None:
        command = ["py-spy", "record", "--rate", str(RATE_HZ), "--format",
                   "raw" if profile.suffix == ".txt" else "flamegraph", "-o", str(profile), "--",
                   *command]
    started, cpu = time.perf_counter(), child_cpu()
    # another source tree's studio (--base): its package first on the path, same interpreter
    env = {**os.environ, "PYTHONPATH": tree} if tree else None
    # from the tree's own folder: ``python -m`` puts the working directory first on the path
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree or None)
    elapsed, cpu = time.perf_counter() - started, child_cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"run failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    summary = next((e["summary"] for e in events if e.get("event") == "summary"), {})
    if summary.get("counts", {}).get("ok", 0) == 0 and "--limit" not in extra:
        raise SystemExit(f"no sample graded: {done.stdout[-400:]}")
    in_run = max((e["elapsed"] for e in events if e.get("event") == "progress" and not e["finished"]),
                 default=elapsed)
    return elapsed, in_run, cpu


#: the judge path's stages, matched against a stack's frames from the innermost out: the first frame
#: that names one decides (so json encoding under ``request_body`` is request building, under
#: ``outcome_values`` result writing)
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("start-up (imports, opening the library)", ("<frozen importlib", "Library.open", "migrate")),
    ("progress events", ("progress", "Progress")),
    ("verdict parsing", ("judges/parsing.py", "judges/answers.py", "_first_json")),
    ("prompt rendering", ("judges/templates.py", "judges/variables.py", "judges/render.py",
                          "build_messages", "reasoning_messages", "_shot_messages")),
    ("JSON parsing of the answer", ("OpenAICompatible.parse", "json/decoder.py", "redact_answer",
                                    "Reply.text")),
    ("request building", ("request_body", "cache_key", "OpenAICompatible.payload", "ChatRequest",
                          "verdict_schema", "Trace.ask ", "url_for", "adapters.py")),
    ("result writing", ("store/runs.py", "outcome_values", "Trace.outcome", "Trace.record",
                        "redaction.py", "Outcome")),
    ("reading samples", ("iter_indexed", "iter_raw", "next_batch", "store/datasets.py")),
    ("HTTP client (transport, sockets)", ("httpcore", "h11", "anyio", "judges/http/transport.py",
                                         "asyncio/streams.py", "selector_events.py", "ssl.py",
                                         "aiohttp", "multidict", "yarl",
                                         "JudgeClient._post", "EndpointPool")),
    ("judge response cache (its writer thread, SQLite)", ("cache.py", "judge_cache.py")),
]
#: matched only when no stage above names a frame of the stack
GENERIC: list[tuple[str, tuple[str, ...]]] = [
    ("judge logic, engine and client bookkeeping", ("studio/core/judges", "studio/core/engine")),
    ("event loop", ("asyncio/", "selectors.py")),
]


def stage_of(frames: list[str]) -> str:
    if any("<frozen importlib" in f for f in frames):
        if any("judges/templates.py" in f for f in frames):
            return "first prompt: pybars builds its grammar (once a process)"
        return STAGES[0][0]
    if frames[-1].startswith("_worker (concurrent/futures/thread.py"):
        return "a pool thread waiting for work (sampled, not CPU)"
    for stages in (STAGES[1:], GENERIC):
        for frame in reversed(frames):
            for name, needles in stages:
                if any(needle in frame for needle in needles):
                    return name
    return "other (no Python frame, the CLI)"


def summarise(collapsed: Path, out: Path, calls: int, top: int = 40) -> None:
    """Per-call CPU by stage of the judge path, then self and total sample counts per function
    from py-spy's collapsed stacks, busiest first (py-spy samples only threads at work, so a
    sample is 4 ms of CPU)."""
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    stages: dict[str, int] = {}
    samples = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        weight = int(count)
        samples += weight
        own[frames[-1]] = own.get(frames[-1], 0) + weight
        for frame in set(frames):
            total[frame] = total.get(frame, 0) + weight
        stage = stage_of(frames)
        stages[stage] = stages.get(stage, 0) + weight
    per_call = 1e6 / RATE_HZ / calls
    lines = [f"{samples} samples at {RATE_HZ} Hz over {calls} judge calls (a sample = "
             f"{1000 / RATE_HZ:g} ms of CPU); by stage: us a call, share"]
    for stage, count in sorted(stages.items(), key=lambda item: -item[1]):
        lines.append(f"{count * per_call:8.0f} us {100 * count / samples:5.1f}%  {stage}")
    lines.append("")
    lines.append("self% total% function (file:line)")
    for frame, count in sorted(own.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"{100 * count / samples:5.1f} {100 * total[frame] / samples:5.1f}  {frame}")
    lines.append("")
    lines.append("busiest by total (inclusive):")
    for frame, count in sorted(total.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"{100 * count / samples:5.1f}  {frame}")
    out.write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=640)
    parser.add_argument("--repeat", type=int, default=3, help="best of N for each timing")
    parser.add_argument("--profile", type=Path, help="write py-spy flame graphs here")
    parser.add_argument("--base", default="",
                        help="another source tree (a git worktree of the base commit) whose studio "
                             "is measured in the same run, before this tree's")
    args = parser.parse_args()
    n = args.samples
    trees = [str(Path(args.base).resolve()), ""] if args.base else [""]
    ideal = n * LATENCY_MS / 1000 / CONCURRENCY
    proc, base_url = start_server()
    ratios: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.sqlite"
            cli(db, "endpoints", "add", "bench", "--base-url", base_url, "--model", "fake-judge",
                "--max-concurrency", str(CONCURRENCY))
            make_dataset(Path(tmp) / "bench.jsonl", n)
            cli(db, "datasets", "import", str(Path(tmp) / "bench.jsonl"), "--name", "bench")
            for path in JUDGES.values():
                cli(db, "graders", "create", str(path))
            print(f"{n} judge calls, concurrency {CONCURRENCY}, scripted server at "
                  f"{LATENCY_MS:.0f} ms/call; {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
            print(f"{'ideal (n x latency / concurrency)':<36} {ideal:6.3f} s")
            for kind, path in JUDGES.items():
                key = path.name.removesuffix(".grader.yaml")
                bodies = record_bodies(db, key, base_url)
                bare = min(asyncio.run(bare_client(base_url, bodies)) for _ in range(args.repeat))
                print(f"{kind + ' judge, bare client':<36} {bare:6.3f} s  {bare / ideal:4.2f}x ideal")
                for tree in trees:
                    # start-up, measured by a one-sample run: wall (interpreter, imports, opening the
                    # library) and on the run's own clock (the first prompt's template compile: pybars
                    # builds its grammar on first use), each less one call's latency
                    firsts = [timed_run(db, key, "--limit", "1", tree=tree)
                              for _ in range(args.repeat)]
                    runs = [timed_run(db, key, tree=tree) for _ in range(args.repeat)]
                    latency = LATENCY_MS / 1000 * round(len(bodies) / n)  # a range judge asks twice
                    wall_startup = min(wall for wall, _, _ in firsts) - latency
                    clock_startup = min(clock for _, clock, _ in firsts) - latency
                    by_wall = min(wall for wall, _, _ in runs) - wall_startup
                    # CPU of the calls alone: a whole run's less a one-sample run's (start-up, imports)
                    more_calls = len(bodies) - len(bodies) // n
                    cpu_call = (min(c for _, _, c in runs) - min(c for _, _, c in firsts)) / more_calls
                    # judged: the run's own clock less its in-run start-up; wall less wall start-up
                    # subtracts two seconds-long figures that swing by a second under load
                    studio = min(clock for _, clock, _ in runs) - clock_startup
                    if not tree:  # the goal is this tree's
                        ratios[kind] = studio / bare
                    print(f"{kind + ' judge, studio on ' + ('base' if tree else 'this tree'):<36} "
                          f"{studio:6.3f} s  "
                          f"{studio / ideal:4.2f}x ideal  {studio / bare:4.2f}x bare  "
                          f"(run clock, first render's {clock_startup:.2f} s subtracted; target <= "
                          f"{TARGET}x bare)")
                    print(f"{'  same, wall - start-up':<36} {by_wall:6.3f} s  {by_wall / ideal:4.2f}x ideal  "
                          f"{by_wall / bare:4.2f}x bare  (start-up {wall_startup:.2f} s subtracted)")
                    print(f"{'  CPU a call':<36} {cpu_call * 1e6:6.0f} us  (the run's CPU less a "
                          f"one-sample run's, over {more_calls} calls)")
                if args.profile:
                    if not shutil.which("py-spy"):
                        raise SystemExit("--profile needs py-spy (pip install py-spy)")
                    args.profile.mkdir(parents=True, exist_ok=True)
                    timed_run(db, key, profile=args.profile / f"{kind}.svg")
                    timed_run(db, key, profile=args.profile / f"{kind}.collapsed.txt")
                    summarise(args.profile / f"{kind}.collapsed.txt", args.profile / f"{kind}.txt",
                              len(bodies))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ok = all(r <= TARGET for r in ratios.values())
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
