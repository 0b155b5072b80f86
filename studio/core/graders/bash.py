"""HUD's BashGrader, run in the sandbox: ``bash -lc command``; exit 0 scores 1.0, else 0.0.

The sample reaches the command as environment variables (``ANSWER`` = the extracted submission,
``EXPECTED``, ``INPUT``, ``SAMPLE_ID``) and as JSON on standard input. A timeout scores 0.0 with
``timed_out`` in the details, as HUD does; the OS limits (no network, read-only system, CPU,
memory, processes) are the function graders' ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import signal
import time
from collections.abc import Sequence
from typing import Any

from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import BashGrader, Outcome, Sample
from studio.core.models.extractors import ExtractionError, extract
from studio.core.sandbox.launch import SandboxRefused, plan_command
from studio.core.sandbox.settings import SandboxSettings
from studio.core.scoring import GradingContext, ScorerBase

OUTPUT_LIMIT = 16 * 1024
#: printed bytes (stdout + stderr) a bash grader may produce before it is killed; only the first
#: OUTPUT_LIMIT of each stream is kept, the rest is counted and dropped as it arrives
READ_LIMIT = 1024 * 1024
MEMORY_MB = 512
CHUNK = 64 * 1024


class _Stream:
    """One output pipe read to its end, keeping the first ``OUTPUT_LIMIT`` bytes."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.total = 0

    async def drain(self, reader: asyncio.StreamReader | None, budget: _Budget) -> None:
        if reader is None:
            return
        while chunk := await reader.read(CHUNK):
            self.total += len(chunk)
            if len(self.kept) < OUTPUT_LIMIT:
                self.kept += chunk[: OUTPUT_LIMIT - len(self.kept)]
            budget.spend(len(chunk))


class _Budget:
    """Shared by both streams: past ``READ_LIMIT`` the process group is killed."""

    def __init__(self, pid: int) -> None:
        self.pid, self.used, self.exceeded = pid, 0, False

    def spend(self, n: int) -> None:
        self.used += n
        if self.used > READ_LIMIT and not self.exceeded:
            self.exceeded = True
            _kill_group(self.pid)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """The sample on stdin; a command that does not read it is fine."""
    if proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


def _env(sample: Sample, answer: str) -> dict[str, str]:
    return {"ANSWER": answer, "EXPECTED": sample.expected or "", "INPUT": sample.input_text(),
            "SAMPLE_ID": sample.id}


async def run_bash(grader: BashGrader, sample: Sample, settings: SandboxSettings | None = None) -> Outcome:
    start = time.perf_counter()
    try:
        answer = extract(sample, grader.extractor)
    except ExtractionError as exc:
        return Outcome.failure(str(exc))
    try:
        plan = plan_command(["bash", "-lc", grader.command], settings or SandboxSettings(), _env(sample, answer),
                            cpu_seconds=max(1, math.ceil(grader.timeout_seconds)), memory_mb=MEMORY_MB)
    except SandboxRefused as exc:
        return Outcome.failure(str(exc))
    try:
        proc = await asyncio.create_subprocess_exec(
            *plan.argv, env=plan.env, cwd=plan.cwd, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return Outcome.failure(f"could not start bash: {exc}")
    timed_out = False
    out, err, budget = _Stream(), _Stream(), _Budget(proc.pid)
    streams = asyncio.gather(_feed(proc, sample.model_dump_json().encode()), out.drain(proc.stdout, budget),
                             err.drain(proc.stderr, budget), proc.wait())
    try:
        await asyncio.wait_for(asyncio.shield(streams), timeout=grader.timeout_seconds)
    except TimeoutError:
        timed_out = True
        _kill_group(proc.pid)
        await streams
    finally:
        _kill_group(proc.pid)  # nothing it started outlives the grade
        for path in plan.cleanup:
            shutil.rmtree(path, ignore_errors=True)
    stdout, stderr = bytes(out.kept), bytes(err.kept)
    code = proc.returncode
    score = 1.0 if code == 0 and not timed_out else 0.0
    details: dict[str, Any] = {"exit_code": code, "timed_out": timed_out, "isolation": plan.mode,
               "stdout": stdout[:OUTPUT_LIMIT].decode(errors="replace"),
               "stderr": stderr[:OUTPUT_LIMIT].decode(errors="replace")}
    if budget.exceeded:
        return Outcome(status="error", error=f"output limit ({READ_LIMIT // 1024} KiB of stdout and stderr) "
                       f"exceeded: the command was killed after {budget.used} bytes", details=details,
                       duration_ms=(time.perf_counter() - start) * 1000)
    if timed_out:
        rationale = f"timed out after {grader.timeout_seconds:g} s"
    else:
        rationale = f"exit code {code}" + (f": {details['stderr'].strip()[-300:]}" if code and details["stderr"].strip() else "")
    return Outcome(score=score, scores={grader.metric.key: score}, rationale=rationale, details=details,
                   duration_ms=(time.perf_counter() - start) * 1000)


class BashScorer(ScorerBase):
    batch_size = 4

    def __init__(self, grader: BashGrader, ctx: GradingContext) -> None:
        self.grader = grader
        self.ctx = ctx
        self.parallel_batches = ctx.concurrency or max(2, (os.cpu_count() or 2))

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return list(await asyncio.gather(*(self._one(s) for s in samples)))

    async def _one(self, sample: Sample) -> Outcome:
        if self.ctx.cancel.is_set():
            return Outcome.failure("cancelled")
        return await run_bash(self.grader, sample)


def make_scorer(grader: BashGrader, ctx: GradingContext) -> BashScorer:
    return BashScorer(grader, ctx)


KIND = Kind(kind="bash", sandboxed=True, cluster=True, model=BashGrader, family="rule", rank=10, icon=("mdi6.console", "#b5651d"),
    platforms={"hud": NATIVE, "adaptive": refused("Adaptive graders cannot run shell commands")}, label="Bash", scorer=f"{__name__}:make_scorer", editor="form",
            starter={"command": "exit 0", "timeout_seconds": 30})
