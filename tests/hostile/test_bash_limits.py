"""Bash graders: their output is read with a bound, and past it the command is killed."""

from __future__ import annotations

import asyncio
import os

from peak_memory import GROWTH_LIMIT_MB, PeakGrowth

from studio.core.graders.bash import READ_LIMIT, run_bash
from studio.core.models import BashGrader, Sample, Turn

SAMPLE = Sample(id="s", messages=[Turn(role="user", content="q")], completion="4", expected="4")


def bash(command: str, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    return asyncio.run(run_bash(BashGrader(key="b", command=command, timeout_seconds=timeout), SAMPLE))




def test_a_flood_of_output_is_cut_off_and_the_command_killed() -> None:
    memory = PeakGrowth().mark()
    outcome = bash("head -c 400M /dev/zero; exit 0")
    assert outcome.status == "error"
    assert outcome.error is not None and outcome.error.startswith(f"output limit ({READ_LIMIT // 1024} KiB of stdout")
    assert len(outcome.details["stdout"]) <= 16 * 1024
    assert memory.mb() < GROWTH_LIMIT_MB


def test_a_flood_on_stderr_counts_too() -> None:
    outcome = bash("head -c 50M /dev/zero >&2; exit 0")
    assert outcome.status == "error" and "output limit" in (outcome.error or "")


def test_output_under_the_limit_is_kept() -> None:
    outcome = bash("echo hello; echo oops >&2; exit 0")
    assert outcome.status == "ok" and outcome.score == 1.0
    assert outcome.details["stdout"] == "hello\n" and outcome.details["stderr"] == "oops\n"


def test_a_timed_out_command_leaves_no_process_behind() -> None:
    outcome = bash("sleep 311 & sleep 311; exit 0", timeout=1)
    assert outcome.details["timed_out"] is True and outcome.score == 0.0
    assert [pid for pid in _descendants(os.getpid()) if _cmdline(pid) == b"sleep\x00311\x00"] == []


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = _parent(int(entry))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None
