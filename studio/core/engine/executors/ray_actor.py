"""The Ray actor on a cluster node: a warm sandbox pool and one scorer, grading blocks of samples.

An actor is the local engine without the library: it receives blocks of (idx, sample id, stored
sample JSON) rows, grades them with the same scorer the engine would build (same sandbox, limits and
shims, the pool sized to the CPUs the actor holds) and returns one ``Outcome`` per row, in order. It
writes nothing: results go back to the driver, the single writer. Blocks that arrive while another is
grading wait on one semaphore, so pipelining blocks never puts more sandbox workers to work than the
actor's CPUs. This module imports no Ray: the driver wraps the class with ``ray.remote``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from typing import Any

from studio.core.graders.registry import make_scorer
from studio.core.models import GRADER_ADAPTER, Outcome, Sample
from studio.core.sandbox import SandboxSettings, WorkerPool
from studio.core.sandbox.launch import detect_mode
from studio.core.scoring import GradingContext, Scorer


def _runs_functions(grader: Any) -> bool:
    if grader.kind == "composite":
        return any(_runs_functions(c.grader) for c in grader.components)
    return grader.kind == "function"


class BlockGrader:
    def __init__(self, definition_json: str, cpus: int, sandbox: dict[str, Any] | None = None) -> None:
        self.definition = GRADER_ADAPTER.validate_json(definition_json)  # what dump_grader wrote
        self.cpus = max(1, int(cpus))
        self.cancel_event = threading.Event()
        self.pool = WorkerPool(size=self.cpus, settings=SandboxSettings(**(sandbox or {})))
        if _runs_functions(self.definition):  # builtin and bash graders need no sandbox workers
            self.pool.warm()  # the workers start while the driver plans its first blocks
        self.ctx = GradingContext(library=None, concurrency=self.cpus, cancel=self.cancel_event,
                                  options={"sandbox_pool": self.pool})
        self._scorer: Scorer | None = None
        self._slots: asyncio.Semaphore | None = None

    def _ready_scorer(self) -> tuple[Scorer, asyncio.Semaphore]:
        if self._scorer is None:
            self._scorer = make_scorer(self.definition, self.ctx)
            self._slots = asyncio.Semaphore(max(1, self._scorer.parallel_batches))
        assert self._slots is not None
        return self._scorer, self._slots

    async def ready(self) -> dict[str, Any]:
        """Where this actor runs (the driver's header and report name the nodes)."""
        self._ready_scorer()
        mode = self.pool.settings.mode or detect_mode()  # a node without bubblewrap says so in the report
        return {"host": socket.gethostname(), "pid": os.getpid(), "cpus": self.cpus, "isolation": mode}

    async def grade_block(self, rows: list[tuple[int, str, str]]) -> tuple[list[Outcome], float]:
        """One outcome per row, in order, and the seconds the block took on this node."""
        began: list[float] = []  # when the first chunk got a sandbox slot: time waiting for one is not grading
        scorer, slots = self._ready_scorer()
        raw = bool(getattr(scorer, "accepts_raw_json", False)) and hasattr(scorer, "score_raw_batch")
        size = scorer.batch_size or len(rows)
        # split so that every sandbox worker of this actor gets a share of a small block
        size = max(1, min(size, -(-len(rows) // max(1, scorer.parallel_batches))))
        chunks = [rows[i:i + size] for i in range(0, len(rows), size)]

        async def grade(chunk: list[tuple[int, str, str]]) -> list[Outcome]:
            async with slots:
                if not began:
                    began.append(time.perf_counter())
                if self.cancel_event.is_set():
                    return [Outcome.failure("cancelled") for _ in chunk]
                if raw:
                    return await scorer.score_raw_batch([(sid, data) for _, sid, data in chunk])  # type: ignore[attr-defined]
                return await scorer.score_batch([Sample.model_validate_json(data) for _, _, data in chunk])

        parts = await asyncio.gather(*(grade(c) for c in chunks))
        outcomes = [o for part in parts for o in part]
        if len(outcomes) != len(rows):
            raise RuntimeError(f"{type(scorer).__name__} returned {len(outcomes)} outcomes for {len(rows)} samples")
        return outcomes, time.perf_counter() - (began[0] if began else time.perf_counter())

    async def cancel(self) -> None:
        """Stop grading: samples not yet graded come back as "cancelled" (the driver drops them)."""
        self.cancel_event.set()

    async def close(self) -> None:
        if self._scorer is not None:
            await self._scorer.aclose()
        self.pool.close()
