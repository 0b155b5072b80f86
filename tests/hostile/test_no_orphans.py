"""No sandbox process outlives the studio or the worker it belongs to (an orphaned bwrap was seen
adopted by pid 1): killing a worker kills its whole process group, and a studio that dies takes
its workers with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from studio.core.sandbox.pool import WorkerPool


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry))
    return members


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def wait_gone(pids: list[int], limit: float = 30.0) -> list[int]:
    """The pids still alive once they are all gone or ``limit`` seconds passed (a bound, not a measure)."""
    end = time.monotonic() + limit
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def test_killing_a_worker_kills_its_process_group() -> None:
    pool = WorkerPool(size=1)
    try:
        worker = pool.acquire()
        worker.wait_ready(10)
        pgid = worker.proc.pid
        assert group_members(pgid)
        worker.kill()
        assert wait_gone(group_members(pgid)) == []
    finally:
        pool.close()


def test_a_studio_killed_with_sigkill_leaves_no_sandbox_process() -> None:
    script = textwrap.dedent("""
        import sys
        from studio.core.sandbox.pool import WorkerPool
        from studio.core.sandbox.settings import allow_unsandboxed
        allow_unsandboxed(True)
        pool = WorkerPool(size=2)
        workers = [pool.acquire() for _ in range(2)]
        for w in workers:
            w.wait_ready(10)
        print("ready", flush=True)
        sys.stdin.read()
    """)
    studio = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert studio.stdout is not None and studio.stdout.readline().strip() == "ready"
        sandbox = descendants(studio.pid)
        assert len(sandbox) >= 2
        os.kill(studio.pid, signal.SIGKILL)
        studio.wait()
        assert wait_gone(sandbox) == []
    finally:
        if studio.poll() is None:
            studio.kill()
