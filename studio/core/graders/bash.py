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

from studio.core.kinds import Kind
from studio.core.models import BashGrader, Outcome, Sample
from studio.core.models.extractors import ExtractionError, extract
from studio.core.sandbox.launch import plan_command
from studio.core.sandbox.settings import SandboxSettings
from studio.core.scoring import GradingContext, ScorerBase

OUTPUT_LIMIT = 16 * 1024
MEMORY_MB = 512


def _env(sample: Sample, answer: str) -> dict[str, str]:
    return {"ANSWER": answer, "EXPECTED": sample.expected or "", "INPUT": sample.input_text(),
            "SAMPLE_ID": sample.id}


async def run_bash(grader: BashGrader, sample: Sample, settings: SandboxSettings | None = None) -> Outcome:
    start = time.perf_counter()
    try:
        answer = extract(sample, grader.extractor)
    except ExtractionError as exc:
        return Outcome.failure(str(exc))
    plan = plan_command(["bash", "-lc", grader.command], settings or SandboxSettings(), _env(sample, answer),
                        cpu_seconds=max(1, math.ceil(grader.timeout_seconds)), memory_mb=MEMORY_MB)
    try:
        proc = await asyncio.create_subprocess_exec(
            *plan.argv, env=plan.env, cwd=plan.cwd, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return Outcome.failure(f"could not start bash: {exc}")
    timed_out = False
    try:
        stdout, stderr = await asyncio.wait_for(
            proc.communicate(sample.model_dump_json().encode()), timeout=grader.timeout_seconds)
    except TimeoutError:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = await proc.communicate()
    finally:
        for path in plan.cleanup:
            shutil.rmtree(path, ignore_errors=True)
    code = proc.returncode
    score = 1.0 if code == 0 and not timed_out else 0.0
    details = {"exit_code": code, "timed_out": timed_out, "isolation": plan.mode,
               "stdout": stdout[:OUTPUT_LIMIT].decode(errors="replace"),
               "stderr": stderr[:OUTPUT_LIMIT].decode(errors="replace")}
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


KIND = Kind(kind="bash", label="Bash", scorer=f"{__name__}:make_scorer", editor="form",
            starter={"command": "exit 0", "timeout_seconds": 30})
