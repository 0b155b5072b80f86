"""A bash grader's sample reaches it by its environment and stdin, never a command line: every user
of the host can read /proc/PID/cmdline (the sandbox's launcher's included), so an answer put there
would leak to them, and a long one would not fit (argv is length-capped)."""

from __future__ import annotations

import asyncio
import os

from studio.core.graders.bash import run_bash
from studio.core.models import BashGrader, Sample, Turn
from studio.core.sandbox.launch import detect_mode, plan_command
from studio.core.sandbox.settings import SandboxSettings

MARKER = "answer-7f3c1e-only-in-the-sample"


def _cmdlines() -> list[bytes]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    found.append(fh.read())
            except OSError:
                continue
    return found


def test_the_launch_plan_holds_no_sample_value_in_its_argv() -> None:
    env = {"ANSWER": MARKER, "EXPECTED": MARKER, "INPUT": MARKER, "SAMPLE_ID": MARKER}
    plan = plan_command(["bash", "-lc", "true"], SandboxSettings(), env, cpu_seconds=1, memory_mb=256)
    assert plan.mode == detect_mode()
    assert not any(MARKER in arg for arg in plan.argv), plan.argv
    assert plan.env["ANSWER"] == MARKER  # delivered, by the environment


def test_no_process_on_the_host_shows_the_sample_while_the_grader_runs() -> None:
    """Scanned from the host while the command runs (it sleeps to leave time to look); the command
    still gets the answer and the expected value (exit 0 only when both arrived)."""
    sample = Sample(id=MARKER, messages=[Turn(role="user", content=MARKER)], completion=MARKER, expected=MARKER)
    # `[` is a builtin: the values it compares are on no command line of their own
    grader = BashGrader(key="b", command='[ "$ANSWER" = "$EXPECTED" ] && [ "$SAMPLE_ID" = "$ANSWER" ] '
                        '&& cat >/dev/null && sleep 2', timeout_seconds=30)

    async def graded_while_scanning() -> tuple[object, list[bytes]]:
        task = asyncio.create_task(run_bash(grader, sample))
        seen: list[bytes] = []
        while not task.done():
            seen += [line for line in _cmdlines() if MARKER.encode() in line]
            await asyncio.sleep(0.02)
        return await task, seen

    outcome, seen = asyncio.run(graded_while_scanning())
    assert seen == []
    assert outcome.score == 1.0, outcome  # type: ignore[attr-defined]
