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


def _environs() -> list[bytes]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    found.append(fh.read())
            except OSError:
                continue  # another user's process, or gone
    return found


def _marked(sample_id: str = MARKER) -> Sample:
    return Sample(id=sample_id, messages=[Turn(role="user", content=MARKER)], completion=MARKER, expected=MARKER)


def test_no_process_environment_holds_the_sample_while_the_grader_runs() -> None:
    """/proc/PID/environ is readable by every process of the same user (another grader in the
    unsandboxed mode, anything the user runs): scanned from the host while the command and a program
    it starts run, no environment holds the sample, and the command still has its values."""
    grader = BashGrader(key="b", command='[ "$ANSWER" = "$EXPECTED" ] && [ "$INPUT" = "$ANSWER" ] '
                        '&& cat >/dev/null && sleep 2', timeout_seconds=30)

    async def graded_while_scanning() -> tuple[object, list[bytes]]:
        task = asyncio.create_task(run_bash(grader, _marked()))
        seen: list[bytes] = []
        while not task.done():
            seen += [env for env in _environs() if MARKER.encode() in env]
            await asyncio.sleep(0.02)
        return await task, seen

    outcome, seen = asyncio.run(graded_while_scanning())
    assert seen == []
    assert outcome.score == 1.0, outcome  # type: ignore[attr-defined]


def test_a_hostile_bash_grader_finds_no_other_sample_in_proc() -> None:
    """A bash grader that reads every /proc/*/environ and /proc/*/cmdline it can while another
    grader holds a sample finds it nowhere (in either sandbox mode); a program the command starts
    has no sample in its environment either."""
    victim = BashGrader(key="v", command='[ "$ANSWER" = "$EXPECTED" ] && sleep 3 && python3 -c "import os, sys; '
                        'sys.exit(any(\'' + MARKER + '\' in v for v in os.environ.values()))"', timeout_seconds=30)
    # the marker is put together in the shell and matched by builtins: no command line holds it
    head, tail = MARKER[:10], MARKER[10:]
    hunter = BashGrader(key="h", command=f'm={head}; m="${{m}}{tail}"; sleep 1; '
                        'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do '
                        'c=$(tr "\\0" "\\n" < "$f" 2>/dev/null); case "$c" in *"$m"*) echo "found in $f";; esac; '
                        'done; exit 0',
                        timeout_seconds=30)

    async def both() -> tuple[object, object]:
        return await asyncio.gather(run_bash(victim, _marked()), run_bash(hunter, Sample(id="h", messages=[])))

    victim_outcome, hunter_outcome = asyncio.run(both())
    assert victim_outcome.score == 1.0, victim_outcome  # type: ignore[attr-defined]
    found = hunter_outcome.details["stdout"]  # type: ignore[attr-defined]
    assert hunter_outcome.details["exit_code"] == 0 and "found in" not in found, found  # type: ignore[attr-defined]


def test_a_sample_too_large_for_a_bash_grader_is_its_error() -> None:
    from studio.core.graders.bash import VALUES_LIMIT

    big = Sample(id="big", messages=[], completion="x" * (VALUES_LIMIT + 1))
    outcome = asyncio.run(run_bash(BashGrader(key="b", command="true", timeout_seconds=5), big))
    assert outcome.status == "error" and "too large for a bash grader" in (outcome.error or "")
