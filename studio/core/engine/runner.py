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
from dataclasses import dataclass
from decimal import Decimal
from operator import itemgetter
from typing import TYPE_CHECKING, Literal, cast

from pydantic import Field

from studio.core import saferegex
from studio.core.errors import StudioError
from studio.core.graders.registry import make_scorer
from studio.core.json_types import JsonObject
from studio.core.models import Outcome, RunInfo, Sample
from studio.core.scoring import GradingContext, Scorer
from studio.core.store import Library, NotFound
from studio.core.store.database import DriverRow
from studio.core.store.ledger import Tally
from studio.core.store.run_end import end_tallies
from studio.core.store.run_graders import STORED_KEY
from studio.core.store.run_inputs import TEXTS, Pending
from studio.core.store.run_spend import with_usage
from studio.core.store.runs import ROW_ERROR, ROW_IDX, ROW_STATUS, outcome_values, scored_rows
from studio.core.store.targets import unknown_target

from .plan import Graded, Partial, RunPlan, assemble, partial_of
from .planning import one_off_suite, plan_of, record_suite_run, run_total
from .preflight import check_run_configuration
from .progress import Progress, Written, grown_size
from .run_settings import RunSettings
from .stored_samples import StoredSamples, broken_results, failed_rows, regraded
from .streak import STREAK_LIMIT, FailureStreak
from .written_tally import WrittenTallies

if TYPE_CHECKING:
    from .executors import Executor
    from .summary import RunAggregates

FLUSH_ROWS = 2000
FLUSH_SECONDS = 0.1
FIRST_BATCH = 8
TARGET_BATCH_SECONDS = 0.1
#: graded batches waiting for the writer, per grading task: beyond that a producer waits, so a fast
#: grader cannot pile a whole run's results up in memory ahead of the database
OUTBOX_PER_WORKER = 2


class RunOptions(RunSettings):
    """A run's options as stored in its settings (a run request's, plus what the engine adds)."""

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
    #: ``run --graders a,b,c``: a suite of these graders that is not saved (GRADER is then omitted)
    graders: list[str] | None = None
    #: the overall rule of a ``--graders`` suite: none, mean, all-pass or composite (with overall_grader)
    overall: str | None = None
    overall_grader: str | None = None


ProgressCallback = Callable[[Progress], None]
#: a graded batch on its way to the writer: its sample rows, a suite's per-grader rows, and a suite
#: batch of plain scores' floats by slot (``plan.plain_rows``'s columns; None for any other batch)
_Graded = tuple[list[DriverRow], list[DriverRow], "list[Sequence[float]] | None"]


def start_run(library: Library, grader_key: str | None, dataset_name: str, options: RunOptions | None = None) -> RunInfo:
    """Record a new run (status pending) without grading anything yet. ``grader_key`` names a grader
    or a suite (a grader wins when a key is both); ``options.graders`` makes a one-off suite."""
    options = options or RunOptions()
    if options.graders:
        suite = one_off_suite(options.graders, options.overall or "none", options.overall_grader)
        return record_suite_run(library, suite, dataset_name, options, saved=False)
    if grader_key is None:
        raise NotFound("name a grader or a suite to run")
    try:  # a grader, else a suite, else the sentence saying what the key is not
        record = library.graders.get(grader_key)
    except NotFound as exc:
        missing = exc
    else:
        version = options.version or record.current_version
        definition = library.graders.version(grader_key, version).definition  # NotFound: missing version
        dataset = library.datasets.get(dataset_name)
        check_run_configuration(library, definition, options.endpoint)  # refused before a run row exists
        total = run_total(dataset, options)
        return library.runs.create(
            record.id, version, dataset.id, total, endpoint=options.endpoint,
            settings=options.model_dump(mode="json", exclude_none=True),
        )
    if library.suites.exists(grader_key):
        suite_record = library.suites.get(grader_key)
        version = options.version or suite_record.current_version
        suite = library.suites.version(grader_key, version).definition
        return record_suite_run(library, suite, dataset_name, options, suite_version=version)
    raise unknown_target(library, grader_key, missing) from None


def execute_run(library: Library, run_id: int, *, on_progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None, keep_going: bool | None = None,
                executor: Executor | None = None, retry_errors: bool = False) -> RunInfo:
    """Grade every sample of the run not yet graded; returns the run as stored at the end.
    ``keep_going`` overrides the run's own setting (a resume may ask to grade everything);
    ``executor`` says where (default: the one the run's settings name, this machine unless ``ray``);
    ``retry_errors`` grades the samples whose result is an error again (``run --resume N
    --retry-errors``: their rows are replaced as they are written), a completed run's too."""
    cancel = cancel or threading.Event()
    # refuses a completed run (unless its errors are retried), or one another live process is grading
    library.runs.claim(run_id, reopen=retry_errors)
    try:  # from here the row is this process's: every way out before grading concludes it
        return _claimed(library, run_id, on_progress, cancel, keep_going, executor, retry_errors)
    except BaseException as exc:
        conclude_unstarted(library, run_id, exc, only_from=("running",))
        raise


def conclude_unstarted(library: Library, run_id: int, exc: BaseException, only_from: tuple[str, ...]) -> None:
    """Conclude a run that stopped before or while grading: ``cancelled`` on Ctrl-C, else
    ``failed`` with the sentence (a StudioError's) or the bug's name, so no run is left
    ``pending``/``running`` by a process that gave up on it. ``only_from``: the statuses this
    process may still move it from (a run that concluded meanwhile, or that another process
    grades, is left as it is). Its tallies are kept when they can be read."""
    status = "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed"
    error = str(exc) if isinstance(exc, StudioError) else f"{type(exc).__name__}: {exc}"
    try:
        threshold = RunOptions.model_validate(library.runs.get(run_id).settings).pass_threshold
        from .summary import run_aggregates  # (imported once a run ends, not at its start)

        aggregates: JsonObject | None = run_aggregates(library, run_id, threshold)
    except Exception:  # a row that does not validate (or a library gone): its status still concludes
        aggregates = None
    library.runs.set_status(run_id, status, aggregates=aggregates, error=error, only_from=only_from)


def _claimed(library: Library, run_id: int, on_progress: ProgressCallback | None, cancel: threading.Event,
             keep_going: bool | None, executor: Executor | None, retry_errors: bool) -> RunInfo:
    info = library.runs.get(run_id)
    options = RunOptions.model_validate(info.settings)
    plan = plan_of(library, info, options.pass_threshold)
    dataset = library.datasets.get(info.dataset)
    done = library.runs.done_indices(run_id)
    stored_before = bool(done)
    retried: dict[int, dict[int, Outcome]] = {}
    if retry_errors:
        retried = library.runs.errored(run_id)
        done -= set(retried)
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

    keep = options.keep_going if keep_going is None else keep_going
    streak = None if keep else FailureStreak(list(itertools.islice(
        (i for i in range(dataset.sample_count if limit is None else limit) if i not in done), STREAK_LIMIT)))

    # the samples to grade, in the lane the scorers read: stored JSON rows are checked and parsed a
    # batch at a time (``_Slots.grade``), a row that is no sample becoming that sample's error (stored_samples.py)
    pending = Pending(library.engine, library.datasets, dataset.id, limit, done)
    # A run allocates a few short-lived objects per sample; every full collection would also walk
    # the whole heap the process already held (the app, a caller's data): keep that out of the
    # collector's sight while grading (gc.unfreeze hands it back, nothing is lost).
    gc.freeze()
    try:
        if executor is None:
            from .executors import make_executor

            executor = make_executor(options.executor, options.ray_address)
        grade = executor.grade_fn(plan, _grade)  # the engine's own loop, or a cluster's
        # the tallies of the rows written, kept by the engine's own loop of a fresh run (a resumed
        # run's rows are not all its own; a cluster's driver writes its own way): written_tally.py
        kept = WrittenTallies(plan) if grade is _grade and not stored_before else None
        extra: dict[str, object] = {"kept": kept} if kept is not None else {}
        if retried:
            extra["retried"] = retried
        metrics = asyncio.run(grade(library, run_id, plan, ctx, pending, info.total, already,
                                    on_progress, cancel, streak, **extra))
    finally:  # a failure is concluded by execute_run (conclude_unstarted)
        gc.unfreeze()
        if executor is not None:
            executor.close()
        ctx.close()
    # every grader's tally (and the results rows', which the aggregates are read from), kept for a
    # completed run's readers (run_graders STORED_KEY): as written, or the run's one pass over its results
    overall, stored, figures, kept = _end_tallies(library, run_id, options.pass_threshold, kept)
    # the slots whose rows, as written, name no endpoint: a completed run stores no usage probe of theirs
    quiet = set() if kept is None else {slot for slot, _ in kept.slots if kept.names_no_endpoint(slot)}
    if metrics:
        figures = figures.updated(batch_metrics=metrics)
    if executor is not None and executor.name != "local":
        figures = figures.updated(executor=executor.report())
    end = _ending(library, run_id, info.total, overall.total, figures, ctx,
                  streak.stopped if streak is not None else None, cancel)
    # only a completed run reads its stored tallies: any other may resume
    tallies = {STORED_KEY: with_usage(library, run_id, stored, quiet)} if end.status == "completed" else {}
    library.runs.set_status(run_id, end.status, aggregates=end.figures.as_json() | tallies, error=end.error,
                            only_from=("running",) if end.status == "cancelled" else None)
    return library.runs.get(run_id)


@dataclass(frozen=True)
class _Ending:
    """How a graded run ended: its status, the figures stored with it, and why it stopped short
    (the run's error; None when it did not)."""

    status: Literal["completed", "stopped", "failed", "cancelled"]
    figures: RunAggregates
    error: str | None = None


def _ending(library: Library, run_id: int, total: int, graded: int, figures: RunAggregates, ctx: GradingContext,
            streak_stopped: str | None, cancel: threading.Event) -> _Ending:
    """How the run ended once grading stopped (``graded``: the results stored, as its end's tally
    counted them): halted (no call could succeed), at its budget, on a failure streak, cancelled,
    held by refused keys, else completed. The first that applies wins; the run is stored once."""
    if ctx.halted is not None:  # no call could succeed: the samples not graded wait for a resume
        reason = (f"{ctx.halted}; the run stopped with {total - graded} sample(s) not graded, kept for "
                  f"`grader-studio run --resume {run_id}` once that is fixed")
        return _Ending("stopped", figures.updated(stopped=reason), reason)
    if ctx.budget is not None:
        figures = figures.updated(budget=ctx.budget.to_json())
        if ctx.budget.stopped and not streak_stopped:  # the cap set ``cancel``, not the user
            # the last calls may reach the cap with nothing left to grade: that run is complete
            if graded < total:
                return _Ending("stopped", figures.updated(stopped=ctx.budget.reason), ctx.budget.reason)
            return _Ending("completed", figures)
    if streak_stopped:
        return _Ending("failed", figures.updated(stopped=streak_stopped), streak_stopped)
    # a cancel that came once every sample was graded (the window quitting as the run ends) stops
    # nothing: the run is complete, and is never stored as cancelled
    if cancel.is_set() and graded < total:
        return _Ending("cancelled", figures)
    refused = library.runs.refused_errors(run_id) if figures.statuses.get("error", 0) else 0
    if refused:  # samples a refused key never let grade (written so by older versions): not complete
        reason = (f"{refused} sample(s) hold an error from a refused key or proxy credentials (HTTP 401, "
                  f"403 or 407), so they were never graded: once the key is fixed, `grader-studio run "
                  f"--resume {run_id} --retry-errors` grades them")
        return _Ending("stopped", figures.updated(stopped=reason), reason)
    return _Ending("completed", figures)


def _end_tallies(library: Library, run_id: int, threshold: float,
                 kept: WrittenTallies | None) -> tuple[Tally, JsonObject, RunAggregates, WrittenTallies | None]:
    """(the ``results`` rows' tally, the ``STORED_KEY`` entry, the run's figures, the kept
    tallies they were read from or None): the store answers once (``run_end.end_tallies``), from
    the tallies the writer kept when they are the stored rows', else from the stored rows."""
    from .summary import run_figures  # (imported once a run ends, not at its start)

    end = end_tallies(library, run_id, threshold, None if kept is None else kept.claim())
    return end.overall, end.stored, run_figures(end.facts, threshold), kept if end.as_written else None


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

    def __init__(self, pending: Iterator[DriverRow], maximum: int | None, adaptive: bool = True, minimum: int = 1,
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

    def next_batch(self) -> list[DriverRow] | None:
        if self.size is None:
            batch = list(self.pending)
        else:
            batch = list(itertools.islice(self.pending, self.size))
        return batch or None

    def observe(self, count: int, seconds: float) -> None:
        if self.maximum is None or count == 0 or not self.adaptive:
            return
        self.size = max(self.minimum, grown_size(self.size or 1, count, seconds, TARGET_BATCH_SECONDS, self.maximum))


class _Slots:
    """The scorers of a plan and how the engine feeds them: one slot is the grader's own lanes
    (raw JSON, rows straight from the sandbox); a suite reads each sample once, hands the raw JSON
    to the scorers that take it and one parsed ``Sample`` to the others, and grades every slot of a
    batch side by side (judges wait on their endpoint while built-in checks run)."""

    def __init__(self, plan: RunPlan, scorers: list[Scorer], samples: StoredSamples) -> None:
        self.plan = plan
        self.scorers = scorers
        self.samples = samples
        self.keys = {p.slot: p.key for p in plan.graders}
        self.raw_ok = ["raw" in sc.lanes for sc in self.scorers]
        one = self.scorers[0]
        self.single = not plan.suite
        #: the text lane: every scorer compares a sample's completion and expected columns (built-in
        #: checks), so no sample's JSON is read or parsed, and a suite's checks share the one read
        self.texts = all("texts" in sc.lanes for sc in self.scorers)
        #: the raw lane: stored JSON rows, never parsed here (a suite always reads them raw)
        self.raw: bool | str = TEXTS if self.texts else self.raw_ok[0] if self.single else True
        # the rows lane: a raw-lane scorer that turns its replies into the store's rows itself (the
        # sandboxed function grader), so no Outcome is built per sample on the way to the database
        self.rows_lane = self.single and self.raw is True and "rows" in one.lanes
        #: a suite whose every scorer takes the stored JSON: no sample is parsed but a failed one's
        self.raw_suite = not self.single and not self.texts and all(self.raw_ok)
        sizes = [sc.batch_size for sc in self.scorers]
        self.batch_size = None if None in sizes else min(x for x in sizes if x is not None)
        self.parallel = max(1, max(sc.parallel_batches for sc in self.scorers))
        self.io_bound = any(sc.io_bound for sc in self.scorers)
        self.min_batch = max(sc.min_batch for sc in self.scorers)
        firsts = [f for sc in self.scorers if (f := sc.first_batch) is not None]
        self.first_batch = min(firsts) if firsts else None
        #: every scorer that waits on a server grades sample by sample (ScorerBase.per_sample): hand
        #: out one sample a call, as many calls at once as the batches held, so results (and the
        #: progress) come back one by one; the other scorers of a suite then grade one sample a call
        #: too (microseconds, beside a server's answer)
        self.one_by_one = self.io_bound and self.batch_size is not None and all(
            sc.per_sample for sc in self.scorers if sc.io_bound)

    @classmethod
    async def open(cls, plan: RunPlan, ctx: GradingContext, samples: StoredSamples) -> _Slots:
        """One scorer per slot; those made before one fails are closed again."""
        scorers: list[Scorer] = []
        try:
            for planned in plan.graders:
                scorers.append(make_scorer(planned.definition, ctx))
        except BaseException:
            for made in scorers:
                with contextlib.suppress(Exception):
                    await made.aclose()
            raise
        return cls(plan, scorers, samples)

    def in_flight(self) -> int | None:
        counts = [n for sc in self.scorers if (n := sc.calls_in_flight()) is not None]
        return sum(counts) if counts else None

    def metrics(self) -> dict[str, float]:
        if self.single:
            return self.scorers[0].run_metrics()
        return {f"{p.key}.{k}": v for p, sc in zip(self.plan.graders, self.scorers, strict=True)
                for k, v in sc.run_metrics().items()}

    async def aclose(self) -> None:
        for scorer in self.scorers:
            with contextlib.suppress(Exception):
                await scorer.aclose()

    async def grade(self, run_id: int, batch: list[DriverRow], partial: Partial,
                    cancel: threading.Event, stopping: Callable[[], bool] = bool) -> _Graded:
        """The batch's sample rows and per-grader rows (and a suite batch of plain scores' floats).
        ``stopping()``: the run stopped because samples cannot be graded (a key refused, the first
        ones all failing alike): a sample that failed since is left ungraded, for the resume.
        ``batch``: stored rows (``pending``); a row that is no sample is that sample's error."""
        if self.single and self.raw is True:
            return await self._grade_raw_checked(run_id, batch), [], None
        if self.raw_suite:
            return await self._grade_suite_checked(run_id, batch, partial, cancel, stopping)
        good, parsed, broken = self.samples.split(batch, texts=self.texts)
        if not broken:
            return await self._grade_good(run_id, good, parsed, partial, cancel, stopping)
        rows, grader_rows = broken_results(self.plan, run_id, broken, partial)
        if good:
            graded = await self._grade_good(run_id, good, parsed, partial, cancel, stopping)
            rows, grader_rows = graded[0] + rows, graded[1] + grader_rows
        return rows, grader_rows, None

    async def _grade_raw_checked(self, run_id: int, batch: Sequence[DriverRow]) -> list[DriverRow]:
        """The raw lane: a sandbox worker gets the stored JSON unparsed (its speed: no sample parsed
        here, ~1 us a sample in all). Only the rows of samples that failed are read here: a row that
        is no sample gets its error sentence (stored_samples.py), and a good sample that failed
        with it (a row that is no JSON breaks the worker's request) is graded again, once, without it."""
        rows = await self._grade_one(run_id, batch)
        statuses = set(map(itemgetter(ROW_STATUS), rows))
        if "error" not in statuses and "invalid" not in statuses:
            return rows
        failed = [row for row, result in zip(batch, rows, strict=True) if result[ROW_STATUS] in ("error", "invalid")]
        good, _, broken = self.samples.split(failed)
        if not broken:
            return rows
        fixed = {row[ROW_IDX]: row for row in broken_results(self.plan, run_id, broken, {})[0]}
        if good:
            fixed.update({row[ROW_IDX]: row for row in await self._grade_one(run_id, good)})
        return [fixed.get(row[ROW_IDX], row) for row in rows]

    async def _grade_suite_checked(self, run_id: int, batch: Sequence[DriverRow], partial: Partial,
                                   cancel: threading.Event, stopping: Callable[[], bool]) -> _Graded:
        """``_grade_raw_checked`` for a suite whose every grader takes the stored JSON
        (stored_samples.py): the batch graded raw, then only the failed samples' rows read."""
        before = {row[0]: partial[row[0]] for row in batch if row[0] in partial} if partial else {}
        first = await self._grade_suite(run_id, batch, [], partial, cancel, stopping)
        suspects = failed_rows(batch, first[0], first[1])
        good, _, broken = self.samples.split(suspects) if suspects else (suspects, [], [])
        if not broken:
            return first
        for idx in [row[0] for row in suspects]:  # (``assemble`` moved them on: graded again as they were)
            if idx in before:
                partial[idx] = before[idx]
            else:
                partial.pop(idx, None)
        again = await self._grade_suite(run_id, good, [], partial, cancel, stopping) if good else ([], [], None)
        errors = broken_results(self.plan, run_id, broken, partial)
        return (*regraded(batch, first[:2], again[:2], {row[0] for row in good}, errors, broken), None)

    async def _grade_good(self, run_id: int, batch: Sequence[DriverRow], parsed: list[Sample],
                          partial: Partial, cancel: threading.Event,
                          stopping: Callable[[], bool]) -> _Graded:
        if self.single:  # (the engine's loop drops those rows once it has counted them)
            if not self.raw:
                batch = [(row[0], sample) for row, sample in zip(batch, parsed, strict=True)]
            return await self._grade_one(run_id, batch), [], None
        return await self._grade_suite(run_id, batch, parsed, partial, cancel, stopping)

    async def _grade_one(self, run_id: int, batch: Sequence[DriverRow]) -> list[DriverRow]:
        scorer = self.scorers[0]
        if self.rows_lane:
            return await scorer.score_raw_rows(run_id, batch)
        if self.texts:
            return await self._grade_texts(run_id, batch)
        if self.raw:
            outcomes = await scorer.score_raw_batch([(sid, data) for _, sid, data in batch])
            keyed = [(i, sid) for i, sid, _ in batch]
        else:
            outcomes = await scorer.score_batch([s for _, s in batch])
            keyed = [(i, s.id) for i, s in batch]
        if len(outcomes) != len(batch):
            raise RuntimeError(f"{type(scorer).__name__} returned {len(outcomes)} outcomes for {len(batch)} samples")
        return [outcome_values(run_id, i, sid, o) for (i, sid), o in zip(keyed, outcomes, strict=True)]

    async def _grade_texts(self, run_id: int, batch: Sequence[DriverRow]) -> list[DriverRow]:
        """A run of one built-in check over text rows: a plain score becomes its row directly (the
        row ``outcome_values`` gives for ``Outcome.scored(score, {key: score})``, as ``ok_row``);
        each sample's time is its share of the batch's (a check takes well under a microsecond)."""
        began = time.perf_counter()
        values = await self.scorers[0].score_texts(batch)
        if len(values) != len(batch):
            raise RuntimeError(f"{type(self.scorers[0]).__name__} returned {len(values)} outcomes for "
                               f"{len(batch)} samples")
        ms = (time.perf_counter() - began) * 1000 / len(batch)
        key = self.plan.metric_key(0)

        def other(row: DriverRow, value: Graded) -> DriverRow:
            outcome = value if isinstance(value, Outcome) else Outcome.scored(value, {key: value})
            outcome.duration_ms = ms
            return outcome_values(run_id, row[0], row[1], outcome)

        return scored_rows(run_id, batch, values, key, ms, other)

    async def _grade_suite(self, run_id: int, batch: Sequence[DriverRow], parsed: list[Sample],
                           partial: Partial, cancel: threading.Event,
                           stopping: Callable[[], bool] = bool) -> _Graded:

        async def one(slot: int) -> tuple[int, list[int], Sequence[Graded]]:
            wanted = [k for k, row in enumerate(batch) if slot not in partial.get(row[0], ())] if partial else list(range(len(batch)))
            if not wanted:
                return slot, [], []
            scorer = self.scorers[slot]
            outcomes: Sequence[Graded]
            with saferegex.budget_scope(self.keys[slot]):  # this grader's share of the run's budget
                if self.texts:
                    outcomes = await scorer.score_texts(
                        batch if len(wanted) == len(batch) else [batch[k] for k in wanted])
                elif self.raw_ok[slot]:
                    outcomes = await scorer.score_raw_batch([(batch[k][1], batch[k][2]) for k in wanted])
                elif "values" in scorer.lanes:  # plain scores as floats: no Outcome built for them
                    outcomes = await scorer.score_values([parsed[k] for k in wanted])
                else:
                    outcomes = await scorer.score_batch([parsed[k] for k in wanted])
            if len(outcomes) != len(wanted):
                raise RuntimeError(f"{type(scorer).__name__} returned {len(outcomes)} outcomes for {len(wanted)} samples")
            return slot, wanted, outcomes

        graded = await asyncio.gather(*(one(p.slot) for p in self.plan.graders))
        if all(len(wanted) == len(batch) for _, wanted, _ in graded):  # no sample had graders done before
            columns = [outcomes for _, _, outcomes in graded]
            rows = self.plan.plain_rows(run_id, batch, columns)
            if rows is not None:
                # the floats the rows' scores were written from (WrittenTallies): plain_rows gives rows
                # only when every grader's value of every sample is a finite float
                return rows, [], cast("list[Sequence[float]]", columns)
        # a grader's error after the run stopped is dropped: the sample keeps the other graders' grades
        return (*assemble(self.plan, run_id, batch, graded, partial, cancel.is_set(), stopping()), None)


async def _grade(library: Library, run_id: int, plan: RunPlan, ctx: GradingContext,
                 pending: Callable[[bool | str], Iterator[DriverRow]], total: int, already: int,
                 on_progress: ProgressCallback | None, cancel: threading.Event,
                 streak: FailureStreak | None = None, *, kept: WrittenTallies | None = None,
                 retried: dict[int, dict[int, Outcome]] | None = None) -> dict[str, float]:
    """``pending(raw)`` opens the samples to grade: (idx, Sample) pairs, or (idx, sample id, stored
    JSON) rows when ``raw`` (a scorer declaring the ``raw`` lane; every suite).
    ``kept``: adds up the rows as they are written (engine/written_tally.py). ``retried``: the
    errored samples graded again, with a suite's graders that did not err (those are kept)."""
    slots = await _Slots.open(plan, ctx, StoredSamples.of_run(library, run_id))
    partial = partial_of(library.runs.partial(run_id)) if plan.suite else {}
    if plan.suite and retried:
        partial.update({idx: dict(kept_slots) for idx, kept_slots in retried.items() if kept_slots})
    if kept is not None and (already or partial):
        kept.distrust("the run had results before this process graded it")
    start = time.perf_counter()
    counts: Counter[str] = Counter()
    status_of = itemgetter(ROW_STATUS)
    done = already
    n_workers = slots.parallel * (slots.batch_size or 1) if slots.one_by_one else slots.parallel
    # batches of result rows (``outcome_values`` form, and a suite's per-grader rows) on their way to the store
    outbox: asyncio.Queue[_Graded | None] = asyncio.Queue(OUTBOX_PER_WORKER * n_workers)

    async def writer() -> None:
        nonlocal done
        buffer: list[DriverRow] = []
        grader_buffer: list[DriverRow] = []
        written: list[_Graded] = []  # the batches in the buffers, for ``kept`` once they are written
        last = time.perf_counter()
        finished = False
        while not finished:
            try:
                item = await asyncio.wait_for(outbox.get(), timeout=FLUSH_SECONDS)
            except TimeoutError:
                item = ([], [], None)
            if item is None:
                finished = True
            else:
                buffer.extend(item[0])
                grader_buffer.extend(item[1])
                if kept is not None and (item[0] or item[1]):
                    written.append(item)
            if (buffer or grader_buffer) and (finished or len(buffer) + len(grader_buffer) >= FLUSH_ROWS
                                              or time.perf_counter() - last >= FLUSH_SECONDS):
                rows, buffer = buffer, []
                grader_rows, grader_buffer = grader_buffer, []
                # on the loop's own thread, not a worker thread: SQLite drops the GIL for every row, and
                # a second CPU-bound thread then waits a switch interval each time (25% slower runs)
                if grader_rows:
                    library.runs.write_rows(rows, grader_rows)
                else:
                    library.runs.write_rows(rows)
                last = time.perf_counter()
                if kept is not None:
                    for batch_rows, batch_grader_rows, columns in written:
                        kept.add(batch_rows, batch_grader_rows, columns)
                    written.clear()
                counts.update(map(status_of, rows))
                if streak is not None and not streak.over:
                    for row in rows:
                        if streak.observe_result(row[ROW_IDX], row[ROW_STATUS], row[ROW_ERROR]):
                            cancel.set()  # the graded samples stay; resume (or --keep-going) finishes
                done += len(rows)
                if on_progress is not None:
                    on_progress(Progress(run_id, done, total, dict(counts), time.perf_counter() - start,
                                         Written(rows), in_flight=slots.in_flight()))

    def stopping() -> bool:
        return ctx.halted is not None or (streak is not None and streak.stopped is not None)

    feeder = (_Feeder(pending(slots.raw), 1, adaptive=False) if slots.one_by_one else
              _Feeder(pending(slots.raw), slots.batch_size, adaptive=not slots.io_bound,
                      minimum=slots.min_batch, first=slots.first_batch))
    feed_lock = asyncio.Lock()
    if on_progress is not None:  # the graders are ready: grading starts (the window's start-up bound ends here)
        on_progress(Progress(run_id, done, total, {}, 0.0, [], in_flight=slots.in_flight()))

    async def grade_worker() -> None:
        while not cancel.is_set():
            async with feed_lock:
                batch = feeder.next_batch()  # same reason as the writer: parsing is CPU-bound
            if batch is None:
                return
            began = time.perf_counter()
            rows, grader_rows, columns = await slots.grade(run_id, batch, partial, cancel, stopping)
            feeder.observe(len(batch), time.perf_counter() - began)
            if slots.single:
                if len(rows) != len(batch):
                    raise RuntimeError(f"{type(slots.scorers[0]).__name__} returned {len(rows)} results for "
                                       f"{len(batch)} samples")
                if stopping():  # see ``_Slots.grade``: a failure since the run stopped is not a grade
                    rows = [row for row in rows if row[ROW_STATUS] != "error"]
                elif cancel.is_set():
                    # a batch cut short by cancel: keep only what really graded
                    rows = [row for row in rows if row[ROW_ERROR] != "cancelled"]
            await outbox.put((rows, grader_rows, columns))

    # the run's time on regex matches stopped at their deadline is bounded (saferegex.TimeoutBudget):
    # the tasks made below inherit it, a suite's slots each charge their own grader's share
    regex_budget = saferegex.use_budget(saferegex.TimeoutBudget(), plan.graders[0].key)
    writer_task = asyncio.create_task(writer())
    workers = [asyncio.create_task(grade_worker()) for _ in range(n_workers)]
    try:
        watcher = asyncio.create_task(_watch_cancel(cancel))
        done_workers = asyncio.gather(*workers)
        first: set[asyncio.Future[list[None]] | asyncio.Task[None]] = {done_workers, watcher, writer_task}
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
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
        await slots.aclose()
        saferegex.end_budget(regex_budget)
    if on_progress is not None:
        on_progress(Progress(run_id, done, total, dict(counts), time.perf_counter() - start, [], finished=True))
    return slots.metrics()


async def _watch_cancel(cancel: threading.Event) -> None:
    while not cancel.is_set():
        await asyncio.sleep(0.05)
