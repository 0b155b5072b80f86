"""Runs a grader version over a dataset: the only writer of results.

Samples flow in batches from the store to the scorer and back; outcomes are written by one writer
task in small transactions as they arrive, so a killed run keeps every finished sample and
``resume`` grades only the rest. Progress goes to an optional callback (the CLI's bar, the window's
signals); cancelling is a ``threading.Event`` that any thread may set.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal, overload

from pydantic import BaseModel, Field

from studio.core.graders.registry import make_scorer
from studio.core.models import Outcome, RunInfo
from studio.core.scoring import GradingContext, Scorer
from studio.core.store import Library
from studio.core.store.runs import ROW_ERROR, ROW_IDX, ROW_STATUS, outcome_values, row_outcome

from .preflight import check_run_configuration
from .streak import STREAK_LIMIT, FailureStreak

if TYPE_CHECKING:
    from .executors import Executor

FLUSH_ROWS = 2000
FLUSH_SECONDS = 0.1
FIRST_BATCH = 8
TARGET_BATCH_SECONDS = 0.1
#: graded batches waiting for the writer, per grading task: beyond that a producer waits, so a fast
#: grader cannot pile a whole run's results up in memory ahead of the database
OUTBOX_PER_WORKER = 2


class RunOptions(BaseModel):
    version: int | None = None
    limit: int | None = Field(default=None, ge=1)
    concurrency: int | None = Field(default=None, ge=1)
    endpoint: str | None = None
    use_cache: bool = True
    pass_threshold: float = 0.5
    #: grade every sample even when the first ones all fail the same way (see streak.py)
    keep_going: bool = False
    #: grade only these sample indices (align's held-out part); None = the whole dataset
    samples: list[int] | None = None
    #: runs made together by ``run --repeat``: the first run's id, and this run's place (1..N)
    repeat_of: int | None = None
    repeat_index: int | None = None
    #: where the samples are graded: this machine, or a Ray cluster (see engine/executors)
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    #: spend caps (engine/budget.py): the run stops starting judge calls once it has spent this much
    max_cost: Decimal | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)


class Written(Sequence[tuple[int, Outcome]]):
    """The results one progress event reports, as (sample_idx, Outcome) pairs: the writer holds the
    stored rows, and each Outcome is rebuilt from its row only when read (a run writes tens of
    thousands a second and most listeners want the indices alone: ``Progress.written_indices``)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> tuple[int, Outcome]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, Outcome]]: ...
    def __getitem__(self, index: int | slice) -> tuple[int, Outcome] | list[tuple[int, Outcome]]:
        if isinstance(index, slice):
            return [(row[ROW_IDX], row_outcome(row)) for row in self._rows[index]]
        row = self._rows[index]
        return row[ROW_IDX], row_outcome(row)

    def indices(self) -> list[int]:
        return [row[ROW_IDX] for row in self._rows]


@dataclass
class Progress:
    run_id: int
    done: int
    total: int
    counts: dict[str, int]
    elapsed: float
    #: the (sample_idx, outcome) pairs written since the previous event (a list, or ``Written``)
    written: Sequence[tuple[int, Outcome]] = field(default_factory=list)
    finished: bool = False
    #: calls waiting on a judge/server right now (None for graders that make none)
    in_flight: int | None = None

    def written_indices(self) -> list[int]:
        """The sample indices of ``written``, without rebuilding an Outcome each."""
        if isinstance(self.written, Written):
            return self.written.indices()
        return [idx for idx, _ in self.written]

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        if self.rate <= 0:
            return None
        return (self.total - self.done) / self.rate


ProgressCallback = Callable[[Progress], None]


def start_run(library: Library, grader_key: str, dataset_name: str, options: RunOptions | None = None) -> RunInfo:
    """Record a new run (status running) without grading anything yet."""
    options = options or RunOptions()
    record = library.graders.get(grader_key)
    version = options.version or record.current_version
    definition = library.graders.version(grader_key, version).definition  # NotFound: missing version
    dataset = library.datasets.get(dataset_name)
    check_run_configuration(library, definition, options.endpoint)  # refused before a run row exists
    total = dataset.sample_count if options.limit is None else min(options.limit, dataset.sample_count)
    if options.samples is not None:
        total = len({i for i in options.samples if 0 <= i < dataset.sample_count})
    return library.runs.create(
        record.id, version, dataset.id, total, endpoint=options.endpoint,
        settings=options.model_dump(mode="json", exclude_none=True),
    )


def execute_run(library: Library, run_id: int, *, on_progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None, keep_going: bool | None = None,
                executor: Executor | None = None) -> RunInfo:
    """Grade every sample of the run not yet graded; returns the run as stored at the end.
    ``keep_going`` overrides the run's own setting (a resume may ask to grade everything);
    ``executor`` says where (default: the one the run's settings name, this machine unless ``ray``)."""
    cancel = cancel or threading.Event()
    library.runs.claim(run_id)  # refuses a completed run, or one another live process is grading
    info = library.runs.get(run_id)
    options = RunOptions.model_validate(info.settings)
    definition = library.graders.version(info.grader_key, info.grader_version).definition
    dataset = library.datasets.get(info.dataset)
    done = library.runs.done_indices(run_id)
    already = len(done)
    limit: int | None = info.total
    if options.samples is not None:  # a subset: everything else is skipped, as if already graded
        done |= set(range(dataset.sample_count)) - set(options.samples)
        limit = None
    ctx = GradingContext(library=library, endpoint=options.endpoint, use_cache=options.use_cache,
                         concurrency=options.concurrency, cancel=cancel)
    if options.max_cost is not None or options.max_tokens is not None:
        from .budget import run_budget

        ctx.budget = run_budget(library, run_id, options.max_cost, options.max_tokens, cancel)

    def pending(raw: bool) -> Iterator[Any]:
        if raw:  # (idx, sample id, stored JSON): the scorer's worker reads the JSON, nothing parsed here
            return library.datasets.iter_raw(dataset.id, limit=limit, skip=done)
        return library.datasets.iter_indexed(dataset.id, limit=limit, skip=done)

    # A run allocates a few short-lived objects per sample; every full collection would also walk
    # the whole heap the process already held (the app, a caller's data): keep that out of the
    # collector's sight while grading (gc.unfreeze hands it back, nothing is lost).
    gc.freeze()
    keep = options.keep_going if keep_going is None else keep_going
    streak = None if keep else FailureStreak(list(itertools.islice(
        (i for i in range(dataset.sample_count if limit is None else limit) if i not in done), STREAK_LIMIT)))
    try:
        if executor is None:
            from .executors import make_executor

            executor = make_executor(options.executor, options.ray_address)
        grade = executor.grade_fn(definition, _grade)  # the engine's own loop, or a cluster's
        metrics = asyncio.run(grade(library, run_id, definition, ctx, pending, info.total, already,
                                    on_progress, cancel, streak))
    except BaseException as exc:
        library.runs.set_status(run_id, "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed",
                                aggregates=library.runs.aggregates(run_id, options.pass_threshold),
                                error=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        gc.unfreeze()
        if executor is not None:
            executor.close()
        ctx.close()
    aggregates = library.runs.aggregates(run_id, options.pass_threshold)
    if metrics:
        aggregates["batch_metrics"] = metrics
    if executor is not None and executor.name != "local":
        aggregates["executor"] = executor.report()
    stopped = streak.stopped if streak is not None else None
    if ctx.budget is not None:
        aggregates["budget"] = ctx.budget.to_json()
        if ctx.budget.stopped and not stopped:  # the cap set ``cancel``, not the user
            # the last calls may reach the cap with nothing left to grade: that run is complete
            unfinished = library.runs.get(run_id).done < info.total
            if unfinished:
                aggregates["stopped"] = ctx.budget.reason
            library.runs.set_status(run_id, "stopped" if unfinished else "completed", aggregates=aggregates,
                                    error=ctx.budget.reason if unfinished else None)
            return library.runs.get(run_id)
    if stopped:
        aggregates["stopped"] = stopped
        library.runs.set_status(run_id, "failed", aggregates=aggregates, error=stopped)
        return library.runs.get(run_id)
    status = "cancelled" if cancel.is_set() else "completed"
    library.runs.set_status(run_id, status, aggregates=aggregates)
    return library.runs.get(run_id)


def run_grader(library: Library, grader_key: str, dataset_name: str, options: RunOptions | None = None, *,
               on_progress: ProgressCallback | None = None, cancel: threading.Event | None = None) -> RunInfo:
    run = start_run(library, grader_key, dataset_name, options)
    return execute_run(library, run.id, on_progress=on_progress, cancel=cancel)


class _Feeder:
    """Hands out batches whose size adapts to the grader's speed.

    Batches start small and grow while a batch takes less than ``TARGET_BATCH_SECONDS`` (up to the
    scorer's own maximum), so fast graders get large batches (cheap IPC and writes) and slow ones
    small batches: a killed run then loses at most a fraction of a second of work per worker.
    An I/O-bound scorer (``adaptive`` false: judges) always gets its full batch size: its samples
    wait on a server, and a time target would leave most of its allowed calls unused.
    """

    def __init__(self, pending: Iterator[Any], maximum: int | None, adaptive: bool = True, minimum: int = 1,
                 first: int | None = None) -> None:
        self.pending = pending
        self.maximum = maximum
        self.adaptive = adaptive
        #: a scorer that overlaps samples inside one call (an async grader) wants at least that many
        self.minimum = max(1, minimum if maximum is None else min(minimum, maximum))
        #: while the grader's speed is unknown; a scorer whose batch is lost whole when one sample hangs
        #: (a sandbox worker) asks for 1, so hung samples start on different workers and time out together
        first = FIRST_BATCH if first is None else max(1, first)
        self.size = maximum if maximum is None or not adaptive else min(max(first, self.minimum), maximum)

    def next_batch(self) -> list[Any] | None:
        if self.size is None:
            batch = list(self.pending)
        else:
            batch = list(itertools.islice(self.pending, self.size))
        return batch or None

    def observe(self, count: int, seconds: float) -> None:
        if self.maximum is None or count == 0 or not self.adaptive:
            return
        self.size = max(self.minimum, grown_size(self.size or 1, count, seconds, TARGET_BATCH_SECONDS, self.maximum))


def grown_size(size: int, count: int, seconds: float, target: float, maximum: int) -> int:
    """The next batch size after ``count`` samples took ``seconds``: aimed at ``target`` seconds a
    batch, at most ``maximum``, and growing at most 4x per step so one lucky fast batch does not jump
    to the maximum (shared by the local feeder and the Ray driver's blocks)."""
    per_sample = seconds / count
    wanted = int(target / per_sample) if per_sample > 0 else maximum
    return max(1, min(maximum, wanted, max(size, count) * 4))


async def _grade(library: Library, run_id: int, definition: Any, ctx: GradingContext,
                 pending: Callable[[bool], Iterator[Any]], total: int, already: int,
                 on_progress: ProgressCallback | None, cancel: threading.Event,
                 streak: FailureStreak | None = None) -> dict[str, float]:
    """``pending(raw)`` opens the samples to grade: (idx, Sample) pairs, or (idx, sample id, stored
    JSON) rows when ``raw`` (a scorer with ``accepts_raw_json``: the raw lane)."""
    scorer: Scorer = make_scorer(definition, ctx)
    raw = bool(getattr(scorer, "accepts_raw_json", False)) and hasattr(scorer, "score_raw_batch")
    # the rows lane: a raw-lane scorer that turns its replies into the store's rows itself (the
    # sandboxed function grader), so no Outcome is built per sample on the way to the database
    rows_lane = raw and hasattr(scorer, "score_raw_rows")
    start = time.perf_counter()
    counts: Counter[str] = Counter()
    status_of = itemgetter(ROW_STATUS)
    done = already
    n_workers = max(1, scorer.parallel_batches)
    # batches of result rows (``outcome_values`` form) on their way to the store
    outbox: asyncio.Queue[list[tuple[Any, ...]] | None] = asyncio.Queue(OUTBOX_PER_WORKER * n_workers)
    in_flight = getattr(scorer, "calls_in_flight", lambda: None)

    async def writer() -> None:
        nonlocal done
        buffer: list[tuple[Any, ...]] = []
        last = time.perf_counter()
        finished = False
        while not finished:
            try:
                item = await asyncio.wait_for(outbox.get(), timeout=FLUSH_SECONDS)
            except TimeoutError:
                item = []
            if item is None:
                finished = True
            else:
                buffer.extend(item)
            if buffer and (finished or len(buffer) >= FLUSH_ROWS or time.perf_counter() - last >= FLUSH_SECONDS):
                rows, buffer = buffer, []
                # on the loop's own thread, not a worker thread: SQLite drops the GIL for every row, and
                # a second CPU-bound thread then waits a switch interval each time (25% slower runs)
                library.runs.write_rows(rows)
                last = time.perf_counter()
                counts.update(map(status_of, rows))
                if streak is not None and not streak.over:
                    for row in rows:
                        if streak.observe_result(row[ROW_IDX], row[ROW_STATUS], row[ROW_ERROR]):
                            cancel.set()  # the graded samples stay; resume (or --keep-going) finishes
                done += len(rows)
                if on_progress is not None:
                    on_progress(Progress(run_id, done, total, dict(counts), time.perf_counter() - start,
                                         Written(rows), in_flight=in_flight()))

    feeder = _Feeder(pending(raw), scorer.batch_size, adaptive=not getattr(scorer, "io_bound", False),
                     minimum=getattr(scorer, "min_batch", 1), first=getattr(scorer, "first_batch", None))
    feed_lock = asyncio.Lock()

    async def grade_worker() -> None:
        while not cancel.is_set():
            async with feed_lock:
                batch = feeder.next_batch()  # same reason as the writer: parsing is CPU-bound
            if batch is None:
                return
            began = time.perf_counter()
            if rows_lane:
                rows = await scorer.score_raw_rows(run_id, batch)  # type: ignore[attr-defined]
            else:
                if raw:
                    outcomes = await scorer.score_raw_batch([(sid, data) for _, sid, data in batch])  # type: ignore[attr-defined]
                    keyed = [(i, sid) for i, sid, _ in batch]
                else:
                    outcomes = await scorer.score_batch([s for _, s in batch])
                    keyed = [(i, s.id) for i, s in batch]
                if len(outcomes) != len(batch):
                    raise RuntimeError(f"{type(scorer).__name__} returned {len(outcomes)} outcomes for {len(batch)} samples")
                rows = [outcome_values(run_id, i, sid, o) for (i, sid), o in zip(keyed, outcomes, strict=True)]
            feeder.observe(len(batch), time.perf_counter() - began)
            if len(rows) != len(batch):
                raise RuntimeError(f"{type(scorer).__name__} returned {len(rows)} results for {len(batch)} samples")
            if cancel.is_set():
                # a batch cut short by cancel: keep only what really graded
                rows = [row for row in rows if row[ROW_ERROR] != "cancelled"]
            await outbox.put(rows)

    writer_task = asyncio.create_task(writer())
    workers = [asyncio.create_task(grade_worker()) for _ in range(n_workers)]
    try:
        watcher = asyncio.create_task(_watch_cancel(cancel))
        done_workers = asyncio.gather(*workers)
        await asyncio.wait({done_workers, watcher, writer_task}, return_when=asyncio.FIRST_COMPLETED)
        if writer_task.done():  # the writer failed (the database): producers would wait on it forever
            watcher.cancel()
            for task in workers:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await done_workers
        elif cancel.is_set():
            # give in-flight batches a moment to report, then stop them; a run stopped by its
            # budget waits for every call in flight instead (they are paid for, and none starts)
            drain = getattr(ctx.budget, "stopped", False)
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(done_workers), timeout=None if drain else 2.0)
            for task in workers:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await done_workers
        else:
            watcher.cancel()
            await done_workers  # re-raises a worker's bug
    finally:
        if not writer_task.done():
            await outbox.put(None)
        await writer_task  # re-raises the writer's failure
        with contextlib.suppress(Exception):
            await scorer.aclose()
    if on_progress is not None:
        on_progress(Progress(run_id, done, total, dict(counts), time.perf_counter() - start, [], finished=True))
    return scorer.run_metrics()


async def _watch_cancel(cancel: threading.Event) -> None:
    while not cancel.is_set():
        await asyncio.sleep(0.05)
