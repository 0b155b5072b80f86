"""The engine's view of function graders: ``make_scorer(grader, ctx)`` (see core/scoring.py).

Batches of 256 samples go to warm sandbox workers, one session (worker) per batch in flight; the
MKA1 batch contract gets the whole dataset in one call and reports run metrics.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from studio.core.json_types import JsonArray
from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.scoring import SAMPLES, GradingContext, ResultRowValues, ScorerBase
from studio.core.store.runs import outcome_values

from . import payloads
from .pool import WorkerPool, shared_pool
from .results import OK, batch_outcomes, result_rows, to_outcome
from .session import GraderSession, GraderSpec

_T = TypeVar("_T")

#: the most samples of one request to a worker. The feeder sizes batches by time (0.1 s a batch), so
#: slow or large samples never reach it; a fast grader does, and every batch costs the host a thread
#: hop, a request, a reply and a queue round (~0.3 ms of its CPU): 256 cost ~1.5 us a sample of a
#: 300,000-sample exact-match run, 2048 a few tenths (bench/README.md section 3)
BATCH_SIZE = 2048


class FunctionScorer(ScorerBase):
    #: one sample per worker until the grader's speed is known: a batch timeout cannot tell which of
    #: its samples hung, so a first batch of several hung samples cost one timeout each, one after
    #: another; alone on separate workers they time out side by side. Fast graders grow to
    #: ``BATCH_SIZE`` within a few round trips (the engine's feeder sizes batches by time)
    first_batch: int | None = 1

    def __init__(self, grader: FunctionGrader, ctx: GradingContext, pool: WorkerPool | None = None) -> None:
        self.grader = grader
        self.ctx = ctx
        self.pool = pool or ctx.options.get("sandbox_pool") or shared_pool()
        concurrency = ctx.concurrency or self.pool.size
        # A plain grader overlaps only across workers (one sample at a time each, no threads in the
        # sandbox); an ``async def`` grader awaits up to ``overlap`` samples at once in each of a
        # few workers, so a grader that waits needs no process per sample.
        self._async_workers = max(1, min(self.pool.size, concurrency))
        overlap = -(-concurrency // self._async_workers)
        self.spec = GraderSpec.of(grader, self.pool.settings, overlap)
        self.key = grader.metric.key
        self.batch_size = None if grader.contract == "mka1_batch" else BATCH_SIZE
        self._gate: asyncio.Semaphore | None = None
        self._gate_open = not _entry_is_async(grader)
        if grader.contract == "mka1_batch":
            self.parallel_batches = 1
        elif self._gate_open:
            self.parallel_batches = concurrency
        else:  # a batch ready for each async worker as it finishes one (more would only wait)
            self.parallel_batches = min(concurrency, 2 * self._async_workers)
            self.min_batch = overlap
        # one thread per batch in flight (each waits on its worker's pipe): asyncio.to_thread's
        # shared pool (cpu count + 4) would cap a run at 6 workers whatever --concurrency says
        self._executor = ThreadPoolExecutor(max_workers=self.parallel_batches, thread_name_prefix="sandbox-batch")
        self._idle: list[GraderSession] = []
        self._all: list[GraderSession] = []
        self._metrics: dict[str, float] = {}
        #: the engine may hand over samples as stored JSON (``score_raw_batch``, and straight to the
        #: store's rows, ``score_raw_rows``): the worker builds the payloads, except when a Letta
        #: extractor must run in the studio
        raw = not payloads.needs_studio(grader.contract, grader.extractor)
        self.lanes = SAMPLES | {"raw", "rows"} if raw else SAMPLES

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

    def _limit(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Sessions a batch may use: all for a plain grader, ``_async_workers`` for an async one."""
        if self._gate_open:
            return contextlib.nullcontext()
        if self._gate is None:
            self._gate = asyncio.Semaphore(self._async_workers)
        return self._gate

    async def _in_thread(self, fn: Callable[..., _T], *args: object) -> _T:
        async with self._limit():
            session = self._session()
            try:
                return await asyncio.get_running_loop().run_in_executor(self._executor, fn, session, *args)
            finally:
                self._idle.append(session)

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        if self.ctx.cancel.is_set():
            return [Outcome.failure("cancelled") for _ in samples]
        return await self._in_thread(self._score, samples)

    async def score_raw_batch(self, rows: Sequence[tuple[str, str]]) -> list[Outcome]:
        """``score_batch`` for samples as stored: (sample id, sample JSON) pairs, never parsed here;
        the worker shapes them for the contract (only in the ``raw`` lane)."""
        if self.ctx.cancel.is_set():
            return [Outcome.failure("cancelled") for _ in rows]
        return await self._in_thread(self._run, [t for _, t in rows], [i for i, _ in rows], True)

    async def score_raw_rows(self, run_id: int, batch: Sequence[tuple[int, str, str]]) -> list[ResultRowValues]:
        """``score_raw_batch`` straight to the store's result rows (``outcome_values`` form) of
        ``run_id``, for (idx, sample id, sample JSON) triples: the worker's checked entries become
        rows without an Outcome each (a run's hot path; ``results.result_rows``)."""
        if self.ctx.cancel.is_set():
            cancelled = Outcome.failure("cancelled")
            return [outcome_values(run_id, idx, sid, cancelled) for idx, sid, _ in batch]
        return await self._in_thread(self._run_rows, run_id, batch)

    def _run_rows(self, session: GraderSession, run_id: int, batch: Sequence[tuple[int, str, str]]) -> list[ResultRowValues]:
        texts = [text for _, _, text in batch]
        if self.grader.contract == "mka1_batch":
            outcomes = self._run(session, texts, [sid for _, sid, _ in batch], True)
            return [outcome_values(run_id, idx, sid, o) for (idx, sid, _), o in zip(batch, outcomes, strict=True)]
        start = time.perf_counter()
        entries = session.run_scores(texts, cancel=self.ctx.cancel, raw=True)
        ms = (time.perf_counter() - start) * 1000 / max(1, len(batch))
        return result_rows(entries, batch, run_id, self.grader.contract, self.key, self.spec.memory_mb,
                           self.spec.output_kib, ms)

    def _score(self, session: GraderSession, samples: Sequence[Sample]) -> list[Outcome]:
        data = payloads.build(self.grader.contract, samples, self.grader.extractor)
        return self._run(session, data, [s.id for s in samples], False)

    def _run(self, session: GraderSession, data: JsonArray, ids: list[str], raw: bool) -> list[Outcome]:
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
        self._executor.shutdown(wait=False)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)


def _entry_is_async(grader: FunctionGrader) -> bool:
    """Whether the grader's entry is an ``async def`` (read from the source, nothing run)."""
    from .validation import _entry

    try:
        tree = ast.parse(grader.source)
    except (SyntaxError, ValueError):
        return False  # the worker reports the syntax error on every sample
    return isinstance(_entry(tree, grader.contract, grader.function_name)[0], ast.AsyncFunctionDef)


def make_scorer(grader: FunctionGrader, ctx: GradingContext) -> FunctionScorer:
    return FunctionScorer(grader, ctx)
