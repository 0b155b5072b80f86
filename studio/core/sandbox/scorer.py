"""The engine's view of function graders: ``make_scorer(grader, ctx)`` (see core/scoring.py).

Batches of 256 samples go to warm sandbox workers, one session (worker) per batch in flight; the
MKA1 batch contract gets the whole dataset in one call and reports run metrics.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.scoring import GradingContext, ScorerBase

from . import payloads
from .pool import WorkerPool, shared_pool
from .results import OK, batch_outcomes, to_outcome
from .session import GraderSession, GraderSpec

BATCH_SIZE = 256


class FunctionScorer(ScorerBase):
    def __init__(self, grader: FunctionGrader, ctx: GradingContext, pool: WorkerPool | None = None) -> None:
        self.grader = grader
        self.ctx = ctx
        self.pool = pool or ctx.options.get("sandbox_pool") or shared_pool()
        self.spec = GraderSpec.of(grader, self.pool.settings)
        self.key = grader.metric.key
        self.batch_size = None if grader.contract == "mka1_batch" else BATCH_SIZE
        self.parallel_batches = 1 if grader.contract == "mka1_batch" else (ctx.concurrency or self.pool.size)
        self._idle: list[GraderSession] = []
        self._all: list[GraderSession] = []
        self._metrics: dict[str, float] = {}
        #: the engine may hand over samples as stored JSON (``score_raw_batch``): the worker builds
        #: the payloads, except when a Letta extractor must run in the studio
        self.accepts_raw_json = not payloads.needs_studio(grader.contract, grader.extractor)

    def _session(self) -> GraderSession:
        if self._idle:
            return self._idle.pop()
        session = GraderSession(self.pool, self.spec, self.ctx.model_bridge(self.grader.endpoint))
        self._all.append(session)
        return session

    def score_sync(self, samples: Sequence[Sample]) -> list[Outcome]:
        """The same as ``score_batch`` for callers without an event loop (validation, tests)."""
        session = self._session()
        try:
            return self._score(session, samples)
        finally:
            self._idle.append(session)

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        if self.ctx.cancel.is_set():
            return [Outcome.failure("cancelled") for _ in samples]
        session = self._session()
        try:
            return await asyncio.to_thread(self._score, session, samples)
        finally:
            self._idle.append(session)

    async def score_raw_batch(self, rows: Sequence[tuple[str, str]]) -> list[Outcome]:
        """``score_batch`` for samples as stored: (sample id, sample JSON) pairs, never parsed here;
        the worker shapes them for the contract (only when ``accepts_raw_json``)."""
        if self.ctx.cancel.is_set():
            return [Outcome.failure("cancelled") for _ in rows]
        session = self._session()
        try:
            return await asyncio.to_thread(self._run, session, [t for _, t in rows], [i for i, _ in rows], True)
        finally:
            self._idle.append(session)

    def _score(self, session: GraderSession, samples: Sequence[Sample]) -> list[Outcome]:
        data = payloads.build(self.grader.contract, samples, self.grader.extractor)
        return self._run(session, data, [s.id for s in samples], False)

    def _run(self, session: GraderSession, data: list[Any], ids: list[str], raw: bool) -> list[Outcome]:
        contract = self.grader.contract
        start = time.perf_counter()
        if contract == "mka1_batch":
            entry = session.run(data, whole=True, cancel=self.ctx.cancel, raw=raw)[0]
            ms = (time.perf_counter() - start) * 1000 / max(1, len(ids))
            if entry[1] != OK:
                failed = to_outcome(entry, contract, self.key, self.spec.memory_mb, self.spec.output_kib)
                return [failed.model_copy(update={"duration_ms": ms}) for _ in ids]
            outcomes, metrics = batch_outcomes(entry[2], ids, self.key)
            self._metrics.update(metrics)
            for outcome in outcomes:
                outcome.duration_ms = ms
            return outcomes
        entries = session.run(data, cancel=self.ctx.cancel, raw=raw)
        ms = (time.perf_counter() - start) * 1000 / max(1, len(ids))
        key, memory_mb, output_kib = self.key, self.spec.memory_mb, self.spec.output_kib
        return [to_outcome(e, contract, key, memory_mb, output_kib, ms) for e in entries]

    def run_metrics(self) -> dict[str, float]:
        return dict(self._metrics)

    def close(self) -> None:
        for session in self._all:
            session.close()
        self._all.clear()
        self._idle.clear()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)


def make_scorer(grader: FunctionGrader, ctx: GradingContext) -> FunctionScorer:
    return FunctionScorer(grader, ctx)
