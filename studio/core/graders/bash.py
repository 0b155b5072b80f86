"""HUD's BashGrader, run in the sandbox: ``bash -lc command``; exit 0 scores 1.0, else 0.0.

The sample reaches the command as shell variables (``ANSWER`` = the extracted submission,
``EXPECTED``, ``INPUT``, ``SAMPLE_ID``) and as JSON on standard input. The variables come through the
same pipe, read by a prelude before the command runs, and are not exported: a sample is never on a
command line (``/proc/PID/cmdline``, readable by every user of the host) nor in any process's
environment (``/proc/PID/environ``, readable by every process of the same user, another grader's
included). A program the command starts gets the values from the command (``printf '%s' "$ANSWER" |
prog``) or reads the JSON on standard input. A timeout scores 0.0 with
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

from studio.core.json_types import JsonObject
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
    """The sample on stdin (``_stdin``); a command that does not read it is fine."""
    if proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


#: the shell variables a bash grader's command reads, in the order the prelude reads them
VARIABLES = ("ANSWER", "EXPECTED", "INPUT", "SAMPLE_ID")
#: runs before the command, in its shell: each variable's value, NUL-terminated, off standard input
#: (``read`` takes a pipe a byte at a time, so the JSON after them is left for the command)
PRELUDE = "; ".join(f"IFS= read -r -d '' {name}" for name in VARIABLES) + "\n"
#: bytes of the variables' values a sample may hand over (the environment they replace held ~128 KiB
#: each; a shell reads them a byte at a time)
VALUES_LIMIT = 2 * 1024 * 1024


def _stdin(sample: Sample, answer: str) -> bytes | None:
    """What the command's standard input carries: the variables' values, then the sample's JSON;
    None when the values pass ``VALUES_LIMIT`` (a shell variable holds no NUL: those are dropped)."""
    values = (answer, sample.expected or "", sample.input_text(), sample.id)
    head = b"".join(v.replace("\0", "").encode("utf-8", "surrogatepass") + b"\0" for v in values)
    if len(head) > VALUES_LIMIT:
        return None
    return head + sample.model_dump_json().encode()


async def run_bash(grader: BashGrader, sample: Sample, settings: SandboxSettings | None = None) -> Outcome:
    start = time.perf_counter()
    try:
        answer = extract(sample, grader.extractor)
    except ExtractionError as exc:
        return Outcome.failure(str(exc))
    data = _stdin(sample, answer)
    if data is None:
        return Outcome.failure(f"the sample's answer, expected answer, input and id hold more than "
                               f"{VALUES_LIMIT // (1024 * 1024)} MiB together: too large for a bash grader")
    try:
        plan = plan_command(["bash", "-lc", PRELUDE + grader.command], settings or SandboxSettings(), {},
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
    streams = asyncio.gather(_feed(proc, data), out.drain(proc.stdout, budget),
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
    details: JsonObject = {"exit_code": code, "timed_out": timed_out, "isolation": plan.mode,
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
