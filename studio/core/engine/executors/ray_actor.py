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
import json
import os
import socket
import threading
import time

from studio.core.graders.registry import make_scorer
from studio.core.json_types import JsonArray, JsonObject
from studio.core.models import GraderBase, Outcome, Sample, parse_grader, walk
from studio.core.sandbox import SandboxSettings, WorkerPool
from studio.core.sandbox.launch import detect_mode
from studio.core.scoring import GradingContext, Scorer


def _runs_functions(grader: GraderBase) -> bool:
    return any(part.kind == "function" for part in walk(grader))


class BlockGrader:
    """``definition_json``: one grader (what dump_grader wrote), or a suite's list of them; a suite's
    block rows then carry the slots each sample still needs, and the answer is per slot."""

    def __init__(self, definition_json: str, cpus: int, sandbox: JsonObject | None = None) -> None:
        loaded = json.loads(definition_json)
        self.suite = isinstance(loaded, list)
        # the library's definitions, read as the store reads them (a row from before a rule still loads)
        self.definitions = [parse_grader(d, stored=True) for d in (loaded if self.suite else [loaded])]
        self.definition = self.definitions[0]
        self.cpus = max(1, int(cpus))
        self.cancel_event = threading.Event()
        self.pool = WorkerPool(size=self.cpus, settings=SandboxSettings(**(sandbox or {})))
        if any(_runs_functions(d) for d in self.definitions):  # builtin and bash graders need no sandbox workers
            self.pool.warm()  # the workers start while the driver plans its first blocks
        self.ctx = GradingContext(library=None, concurrency=self.cpus, cancel=self.cancel_event,
                                  options={"sandbox_pool": self.pool})
        self._scorers: list[Scorer] = []
        self._gates: list[asyncio.Semaphore] = []

    def _ready_scorers(self) -> tuple[list[Scorer], list[asyncio.Semaphore]]:
        if not self._scorers:
            self._scorers = [make_scorer(d, self.ctx) for d in self.definitions]
            self._gates = [asyncio.Semaphore(max(1, s.parallel_batches)) for s in self._scorers]
        return self._scorers, self._gates

    def _ready_scorer(self) -> tuple[Scorer, asyncio.Semaphore]:
        scorers, gates = self._ready_scorers()
        return scorers[0], gates[0]

    async def ready(self) -> JsonObject:
        """Where this actor runs (the driver's header and report name the nodes)."""
        self._ready_scorers()
        mode = self.pool.settings.mode or detect_mode()  # a node without bubblewrap says so in the report
        return {"host": socket.gethostname(), "pid": os.getpid(), "cpus": self.cpus, "isolation": mode}

    async def grade_block(self, rows: JsonArray) -> tuple[JsonArray, float]:
        """One outcome per row, in order, and the seconds the block took on this node; for a suite,
        (slot, row positions, outcomes) per grader, each grader grading the rows that name its slot."""
        if not self.suite:
            return await self._grade_rows(0, rows)
        began = time.perf_counter()
        scorers, _ = self._ready_scorers()

        async def one(slot: int) -> tuple[int, list[int], list[Outcome]]:
            positions = [k for k, row in enumerate(rows) if slot in row[3]]
            outcomes, _ = await self._grade_rows(slot, [rows[k][:3] for k in positions]) if positions else ([], 0.0)
            return slot, positions, outcomes

        parts = await asyncio.gather(*(one(slot) for slot in range(len(scorers))))
        return list(parts), time.perf_counter() - began

    async def _grade_rows(self, slot: int, rows: JsonArray) -> tuple[list[Outcome], float]:
        began: list[float] = []  # when the first chunk got a sandbox slot: time waiting for one is not grading
        scorers, gates = self._ready_scorers()
        scorer, slots = scorers[slot], gates[slot]
        raw = "raw" in scorer.lanes
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
                    return await scorer.score_raw_batch([(sid, data) for _, sid, data in chunk])
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
        for scorer in self._scorers:
            await scorer.aclose()
        self.pool.close()
