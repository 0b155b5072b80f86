"""Warm workers kept ready so that scoring starts without paying for a process start.

A worker serves one grader only (no grader can leave traps for the next): a scorer checks workers
out, loads its grader into them, and on close they are killed; the pool then starts fresh spares in
the background (Popen returns at once, the interpreter starts while nobody waits for it).
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

from .launch import SandboxRefused, plan_worker
from .process import WorkerProcess
from .settings import SandboxSettings


def default_size() -> int:
    return max(1, os.cpu_count() or 1)


class WorkerPool:
    def __init__(self, size: int | None = None, settings: SandboxSettings | None = None) -> None:
        self.size = size or default_size()
        self.settings = settings or SandboxSettings()
        self._spares: list[WorkerProcess] = []
        self._lock = threading.Lock()
        self._closed = False
        self._out: set[WorkerProcess] = set()
        self.started = 0
        # Every worker is started from this one long-lived thread: bubblewrap's --die-with-parent
        # (PR_SET_PDEATHSIG) fires when the *thread* that started it exits, and the scorer runs
        # in short-lived executor threads.
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")
        _ALL_POOLS.add(self)

    def _spawn(self) -> WorkerProcess:
        self.started += 1
        return self._spawner.submit(WorkerProcess, plan_worker(self.settings)).result()

    def warm(self) -> None:
        """Start spares up to ``size`` (cheap: does not wait for them)."""
        with self._lock:
            if self._closed:
                return
            self._spares = [w for w in self._spares if w.alive]
            while len(self._spares) < self.size:
                try:
                    self._spares.append(self._spawn())
                except SandboxRefused:  # grader code may not run here: acquire() says why
                    return

    def acquire(self) -> WorkerProcess:
        """A fresh worker (maybe still starting) for the caller's exclusive use."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the sandbox pool is closed")
            worker = None
            while self._spares:
                candidate = self._spares.pop(0)
                if candidate.alive:
                    worker = candidate
                    break
                candidate.kill()
            if worker is None:
                worker = self._spawn()
            self._out.add(worker)
        return worker

    def release(self, worker: WorkerProcess, *, refill: bool = True) -> None:
        """Kill a used worker (it ran someone's grader) and top the spares up again."""
        worker.kill()
        with self._lock:
            self._out.discard(worker)
        if refill:
            self.warm()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = self._spares + list(self._out)
            self._spares, self._out = [], set()
        for worker in workers:
            worker.kill()
        self._spawner.shutdown(wait=False)


_ALL_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()

#: the process-wide pools, one per settings: the default one (standard library only) and, once an
#: OpenAI python criterion runs, one whose workers see its image's packages (sandbox/packages.py).
#: Workers are started with their mounts, so a grader kind that must not see packages never shares
#: a worker, spare or not, with one that does.
_shared: dict[SandboxSettings, WorkerPool] = {}
_shared_lock = threading.Lock()


def shared_pool(settings: SandboxSettings | None = None, size: int | None = None) -> WorkerPool:
    """The process-wide pool for ``settings`` (default: the window's Try button and the CLI share
    it); warmed on first use."""
    settings = settings or SandboxSettings()
    with _shared_lock:
        pool = _shared.get(settings)
        if pool is None or pool._closed:
            pool = _shared[settings] = WorkerPool(size, settings)
            pool.warm()
        return pool


def close_shared_pool() -> None:
    with _shared_lock:
        pools = list(_shared.values())
        _shared.clear()
    for pool in pools:
        pool.close()


def _close_all() -> None:
    """At exit, kill every worker explicitly: an orphaned bwrap is not reliably reaped (seen here:
    the sandboxed child dies with us but the outer bwrap lingers)."""
    close_shared_pool()
    for pool in list(_ALL_POOLS):
        pool.close()


atexit.register(_close_all)
