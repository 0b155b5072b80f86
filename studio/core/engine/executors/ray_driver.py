"""The Ray executor's driver side: blocks of samples out to actors, outcomes back into the library.

The driver reads the samples still to grade (stored JSON, never parsed here), cuts them into blocks
and hands each to an actor (``ray_actor.BlockGrader``: one per node, or one per ``cpus_per_actor``
CPUs of a node, each holding a warm sandbox pool). At most ``blocks_per_actor`` blocks are in flight
per actor: the driver pulls the next block from the store only when an actor has room, so memory is
bounded by the blocks in flight (back-pressure, not a growing queue). ``ray.wait`` hands back blocks
as they finish; the driver, the only writer of the library, stores them with an idempotent insert
keyed on (run, sample index).

Exactly once: a block whose actor or node dies is put back and graded by another actor; a sample
already stored is never written again (the insert ignores a key already there, and the count it
refuses is reported: 0 in every run we measured). A killed driver leaves an ``interrupted`` run whose
stored rows are exactly the finished blocks; ``run --resume`` grades only the rest. The grader's code
travels with the job (``runtime_env`` ``py_modules``: the ``studio`` package), so a node needs only
Python with Ray and bubblewrap.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from studio.core.engine.plan import Partial, RunPlan, assemble, partial_of
from studio.core.engine.progress import Progress, Written, grown_size
from studio.core.engine.stored_samples import StoredSamples, broken_results
from studio.core.engine.streak import FailureStreak
from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.models import Outcome, dump_grader
from studio.core.sandbox import SandboxSettings
from studio.core.sandbox.settings import unsandboxed_allowed
from studio.core.scoring import GradingContext
from studio.core.store.database import DriverRow
from studio.core.store.library import Library
from studio.core.store.runs import ROW_ERROR, ROW_IDX, ROW_STATUS, outcome_values

from .base import ExecutorError, GradeFn
from .placement import cluster_note, driver_reason
from .ray_actor import BlockGrader
from .ray_local import local_init_options, single_machine

STUDIO_DIR = Path(__file__).resolve().parents[3]  # the ``studio`` package, shipped to every node
#: the job's environment: our code travels with it (Ray uploads a local folder only at the job level,
#: so a process that joined Ray itself before us must have shipped ``studio`` in its own job)
RUNTIME_ENV = {"py_modules": [str(STUDIO_DIR)], "excludes": ["__pycache__", "*.pyc"]}
FIRST_BLOCK = 16
MAX_BLOCK = 4096
TARGET_BLOCK_SECONDS = 1.0
BLOCKS_PER_ACTOR = 2
MAX_ATTEMPTS = 4
FLUSH_ROWS = 2000
FLUSH_SECONDS = 0.1
WAIT_SECONDS = 0.05
CANCEL_GRACE_SECONDS = 2.0
REPLAN_SECONDS = 10.0  # how often the driver looks for nodes that joined (an autoscaler's)
NO_ACTOR_PATIENCE_SECONDS = 60.0

log = logging.getLogger(__name__)


@dataclass
class _Block:
    number: int
    rows: list[tuple[int, str, str]]
    attempts: int = 0

    def label(self) -> str:
        return f"samples {self.rows[0][0]}-{self.rows[-1][0]}" if self.rows else "an empty block"


@dataclass
class _Actor:
    handle: Any
    node_id: str
    cpus: int
    ready: bool = False
    in_flight: int = 0
    info: JsonObject = field(default_factory=dict)


class RayExecutor:
    """``--executor ray``: grade on the Ray cluster at ``address`` (else ``RAY_ADDRESS``, else a local
    Ray instance started for the run and stopped after it)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, cpus_per_actor: int | None = None,
                 blocks_per_actor: int = BLOCKS_PER_ACTOR, max_block: int = MAX_BLOCK) -> None:
        self.address = address
        self.cpus_per_actor = cpus_per_actor
        self.blocks_per_actor = max(1, blocks_per_actor)
        self.max_block = max(1, max_block)
        self._owns_ray = False
        self._where = ""
        self._placement = "cluster"
        self._reason: str | None = None
        self._actors: dict[ray.ObjectRef[JsonValue], _Actor] = {}
        self._shunned_nodes: set[str] = set()
        self._stats: JsonObject = {"blocks": 0, "blocks_rerun": 0, "actors_lost": 0, "duplicates_refused": 0, "actors": 0}

    # -- the cluster ---------------------------------------------------------------------------------------
    def connect(self) -> str:
        """Join the cluster (or start a local Ray); returns the sentence the run header shows."""
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS") or None
            kwargs: JsonObject = {"log_to_driver": False, "logging_level": logging.ERROR,
                                      "namespace": "grader-studio", "runtime_env": RUNTIME_ENV}
            local = address is None
            if local:  # listens on 127.0.0.1 only (ray_local)
                kwargs.update(local_init_options())
            try:
                with single_machine() if local else contextlib.nullcontext():
                    ray.init(address=address, **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"cannot reach the Ray cluster at {address}: {exc}") from exc
            self._owns_ray = True
            started = address is None
        else:
            started = False
        nodes = self._cpu_nodes()
        cpus = sum(cpu for _, cpu in nodes)
        if started:
            self._where = f"a local Ray instance started for this run ({cpus} CPUs)"
        else:
            gcs = ray.get_runtime_context().gcs_address
            self._where = f"Ray cluster at {gcs} ({len(nodes)} nodes with CPUs, {cpus} CPUs)"
        return self._where

    def where(self) -> str:
        return self._where or "Ray cluster (not connected yet)"

    def header(self, plan: RunPlan) -> str:
        """The run header's sentence: where the samples are graded, and what stays on this machine.
        Joins the cluster only when the graders go there (a judge run never starts a Ray)."""
        reason = _plan_reason(plan)
        if reason is not None:
            return f"grading on this machine, not on the Ray cluster: {reason}"
        if not self._where:
            self.connect()
        return f"grading on {self.where()}: {cluster_note()}; judges would stay on this machine"

    def _cpu_nodes(self) -> list[tuple[str, int]]:
        return [(n["NodeID"], int(n.get("Resources", {}).get("CPU", 0))) for n in ray.nodes()
                if n.get("Alive") and int(n.get("Resources", {}).get("CPU", 0)) >= 1]

    # -- the executor protocol ----------------------------------------------------------------------------------
    def grade_fn(self, plan: RunPlan, local: GradeFn) -> GradeFn:
        self._reason = _plan_reason(plan)
        if self._reason is not None:
            self._placement = "driver"
            return local
        if not self._where:
            self.connect()
        return self._grade

    def report(self) -> JsonObject:
        report: JsonObject = {"executor": "ray", "placement": self._placement}
        if self._where:
            report["where"] = self._where
        if self._reason:
            report["reason"] = self._reason
        if self._placement == "cluster":
            report.update(self._stats)
        return report

    def close(self) -> None:
        self._stop_actors()
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
        self._owns_ray = False

    # -- actors ---------------------------------------------------------------------------------------------------
    def _plan_actors(self, definition_json: str) -> None:
        """One actor per node with CPUs (or one per ``cpus_per_actor`` of them) where none lives yet."""
        remote = ray.remote(BlockGrader)
        # the user's opt-in to a weaker sandbox (--allow-unsandboxed) travels to the nodes; nothing else
        # of this machine's sandbox settings does (each node detects its own isolation)
        sandbox = {"allow_unsandboxed": True} if unsandboxed_allowed(SandboxSettings()) else None
        have: dict[str, int] = {}
        for actor in self._actors.values():
            have[actor.node_id] = have.get(actor.node_id, 0) + 1
        for node_id, cpus in self._cpu_nodes():
            if node_id in self._shunned_nodes:
                continue
            per_actor = min(cpus, self.cpus_per_actor or cpus)
            wanted = max(1, cpus // per_actor)
            for _ in range(wanted - have.get(node_id, 0)):
                # Any: Ray's stubs type an actor handle's methods as the plain coroutine functions,
                # without the ``.remote`` the handle gives them (mypy with the [ray] extra installed)
                handle: Any = remote.options(
                    num_cpus=per_actor,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                    max_restarts=0, max_task_retries=0, max_concurrency=self.blocks_per_actor + 4,
                ).remote(definition_json, per_actor, sandbox)
                ready_ref = handle.ready.remote()
                self._actors[ready_ref] = _Actor(handle, node_id, per_actor)
                self._stats["actors"] += 1

    def _lose(self, actor: _Actor) -> None:
        """An actor died (its node went away, or the actor process): never use it or its node again."""
        self._stats["actors_lost"] += 1
        self._shunned_nodes.add(actor.node_id)
        for key, value in list(self._actors.items()):
            if value is actor:
                del self._actors[key]
        try:
            ray.kill(actor.handle, no_restart=True)
        except RayError as exc:  # already gone
            log.debug("actor already gone: %s", exc)

    def _stop_actors(self) -> None:
        actors = {id(a): a for a in self._actors.values()}.values()
        closing = [a.handle.close.remote() for a in actors if a.ready]
        if closing:  # let each actor kill its sandbox workers itself; then make sure
            try:
                ray.wait(closing, num_returns=len(closing), timeout=5.0)
            except RayError as exc:
                log.debug("actor close: %s", exc)
        for actor in actors:
            try:
                ray.kill(actor.handle, no_restart=True)
            except RayError as exc:
                log.debug("actor kill: %s", exc)
        self._actors.clear()

    # -- the run --------------------------------------------------------------------------------------------------
    async def _grade(self, library: Library, run_id: int, plan: RunPlan, ctx: GradingContext,
                     pending: Callable[[bool], Iterable[tuple[int, str, str]]], total: int, already: int,
                     on_progress: Callable[[Progress], None] | None, cancel: threading.Event,
                     streak: FailureStreak | None = None) -> dict[str, float]:
        """The engine's grading loop for a cluster (same arguments, same progress events). A suite's
        graders all grade each block on the node (one pass over the samples there too)."""
        # Blocking calls inside the coroutine are deliberate: this loop runs nothing else, and
        # ``ray.wait`` with a short timeout is both the scheduler and the cancel check.
        if plan.suite:
            payload = json.dumps([dump_grader(g.definition) for g in plan.graders])
        else:
            payload = json.dumps(dump_grader(plan.graders[0].definition))
        return _Run(self, library, run_id, payload, total, already, on_progress, cancel, streak,
                    plan=plan).go(pending(True))


def _plan_reason(plan: RunPlan) -> str | None:
    """Why a plan's graders stay on this machine (the first grader that must), else None."""
    for planned in plan.graders:
        reason = driver_reason(planned.definition)
        if reason is not None:
            return reason if not plan.suite else f"{planned.key}: {reason}"
    return None


class _Run:
    def __init__(self, executor: RayExecutor, library: Library, run_id: int, definition_json: str, total: int,
                 already: int, on_progress: Callable[[Progress], None] | None, cancel: threading.Event,
                 streak: FailureStreak | None = None, *, plan: RunPlan) -> None:
        self.ex = executor
        self.plan = plan
        self.suite = plan.suite
        #: a suite's samples some graders finished before (resume): only the others grade them
        self.partial: Partial = partial_of(library.runs.partial(run_id)) if self.suite else {}
        self.grader_buffer: list[DriverRow] = []
        self.streak = streak  # the engine's FailureStreak: the same early stop as a local run
        self.library = library
        self.run_id = run_id
        self.definition_json = definition_json
        self.total = total
        self.done = already
        self.on_progress = on_progress
        self.cancel = cancel
        self.start = time.perf_counter()
        self.counts: dict[str, int] = {}
        self.buffer: list[DriverRow] = []
        self.last_flush = time.perf_counter()
        self.block_size = FIRST_BLOCK
        self.blocks = 0
        self.retry: deque[_Block] = deque()
        self.in_flight: dict[ray.ObjectRef[JsonValue], tuple[_Actor, _Block]] = {}
        self.finished_blocks: set[int] = set()
        self.source_done = False
        self.samples = StoredSamples.of_run(library, run_id)

    # blocks ------------------------------------------------------------------------------------------------
    def _next_block(self, rows: Iterator[tuple[int, str, str]]) -> _Block | None:
        if self.retry:
            return self.retry.popleft()
        if self.source_done:
            return None
        chunk: list[tuple[int, str, str]] = []
        while not chunk:
            for row in rows:
                chunk.append(row)
                if len(chunk) >= self.block_size:
                    break
            if not chunk:
                self.source_done = True
                return None
            # a row that is no sample is that sample's error here, never an actor's (stored_samples.py)
            good, _, broken = self.samples.split(chunk)
            if broken:
                broken_rows, broken_grader_rows = broken_results(self.plan, self.run_id, broken, self.partial)
                self.buffer.extend(broken_rows)
                self.grader_buffer.extend(broken_grader_rows)
            chunk = list(good)
        self.blocks += 1
        self.ex._stats["blocks"] += 1
        return _Block(self.blocks, chunk)

    def _send(self, block: _Block) -> JsonArray:
        """A block as the actor takes it: a suite's rows name the slots each sample still needs."""
        if not self.suite:
            return block.rows
        every = [g.slot for g in self.plan.graders]
        return [(idx, sid, data, [s for s in every if s not in self.partial.get(idx, {})])
                for idx, sid, data in block.rows]

    def _observe(self, count: int, seconds: float) -> None:
        """Blocks grow (at most 4x a step) until one takes about ``TARGET_BLOCK_SECONDS`` on a node:
        large enough that Ray's per-block cost vanishes, small enough that a lost node loses little."""
        if count == 0:
            return
        self.block_size = grown_size(self.block_size, count, seconds, TARGET_BLOCK_SECONDS, self.ex.max_block)

    # writing ------------------------------------------------------------------------------------------------
    def _flush(self, force: bool = False) -> None:
        if not self.buffer and not self.grader_buffer:
            return
        pending = len(self.buffer) + len(self.grader_buffer)
        if not force and pending < FLUSH_ROWS and time.perf_counter() - self.last_flush < FLUSH_SECONDS:
            return
        rows, self.buffer = self.buffer, []
        grader_rows, self.grader_buffer = self.grader_buffer, []
        inserted = self.library.runs.insert_new_rows(rows, grader_rows)
        self.ex._stats["duplicates_refused"] += len(rows) - inserted
        self.last_flush = time.perf_counter()
        if inserted == len(rows):
            for row in rows:
                status = row[ROW_STATUS]
                self.counts[status] = self.counts.get(status, 0) + 1
                if self.streak is not None and self.streak.observe_result(row[ROW_IDX], status, row[ROW_ERROR]):
                    self.cancel.set()  # the graded samples stay; resume (or --keep-going) finishes
        else:  # some rows were already there: count what the library holds, not what arrived
            self.counts = dict(self.library.runs.get(self.run_id).counts)
        self.done += inserted
        if self.on_progress is not None:
            self.on_progress(Progress(self.run_id, self.done, self.total, dict(self.counts),
                                      time.perf_counter() - self.start, Written(rows)))

    def _accept(self, block: _Block, outcomes: JsonArray) -> None:
        if block.number in self.finished_blocks:  # a block answered twice: the first answer stands
            self.ex._stats["duplicates_refused"] += len(block.rows)
            return
        if self.suite:  # (slot, block positions, outcomes) per grader: the engine's own assembly
            for _, positions, slot_outcomes in outcomes:
                if len(positions) != len(slot_outcomes) or any(not isinstance(o, Outcome) for o in slot_outcomes):
                    raise RuntimeError("a Ray actor returned a malformed suite block")
            self.finished_blocks.add(block.number)
            rows, grader_rows = assemble(self.plan, self.run_id, block.rows, outcomes, self.partial,
                                         self.cancel.is_set())
            self.buffer.extend(rows)
            self.grader_buffer.extend(grader_rows)
            return
        if len(outcomes) != len(block.rows):
            raise RuntimeError(f"a Ray actor returned {len(outcomes)} outcomes for {len(block.rows)} samples")
        self.finished_blocks.add(block.number)
        cancelled = self.cancel.is_set()
        for (idx, sid, _), outcome in zip(block.rows, outcomes, strict=True):
            if not isinstance(outcome, Outcome):
                raise RuntimeError(f"a Ray actor returned {type(outcome).__name__} instead of an Outcome")
            if cancelled and outcome.error == "cancelled":
                continue  # cut short by cancel: graded by nobody, left for resume
            self.buffer.append(outcome_values(self.run_id, idx, sid, outcome))

    def _requeue(self, block: _Block, why: str) -> None:
        block.attempts += 1
        if block.attempts >= MAX_ATTEMPTS:
            raise ExecutorError(
                f"the block of {block.label()} was lost {block.attempts} times ({why}); the run stops here "
                "with every finished sample stored: `grader-studio run --resume` continues it")
        self.ex._stats["blocks_rerun"] += 1
        self.retry.append(block)

    # the loop -------------------------------------------------------------------------------------------------
    def go(self, rows: Iterable[tuple[int, str, str]]) -> dict[str, float]:
        rows = iter(rows)
        self.ex._plan_actors(self.definition_json)
        no_actor_since: float | None = None
        planned = time.monotonic()
        try:
            while not self.cancel.is_set():
                if time.monotonic() - planned > REPLAN_SECONDS:
                    self.ex._plan_actors(self.definition_json)
                    planned = time.monotonic()
                self._dispatch(rows)
                if self.source_done and not self.in_flight and not self.retry:
                    break
                live = [k for k in self.ex._actors if not self.ex._actors[k].ready] + list(self.in_flight)
                if not live:
                    # nothing running and nobody to run it: a node may still join (autoscaler)
                    now = time.monotonic()
                    no_actor_since = no_actor_since or now
                    if now - no_actor_since > NO_ACTOR_PATIENCE_SECONDS:
                        raise ExecutorError(
                            f"no Ray node with a free CPU is left on {self.ex.where()}; every finished sample "
                            "is stored: `grader-studio run --resume` continues the run")
                    self.ex._plan_actors(self.definition_json)
                    time.sleep(0.5)
                    continue
                no_actor_since = None
                ready, _ = ray.wait(live, num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    self._collect(ref)
                self._flush()
            if self.cancel.is_set():
                self._wind_down()
        finally:
            self._flush(force=True)
        if self.on_progress is not None:
            self.on_progress(Progress(self.run_id, self.done, self.total, dict(self.counts),
                                      time.perf_counter() - self.start, [], finished=True))
        return {}

    def _dispatch(self, rows: Iterator[tuple[int, str, str]]) -> None:
        """Give every ready actor blocks up to its cap (blocks to re-run first)."""
        for actor in list({id(a): a for a in self.ex._actors.values()}.values()):
            while actor.ready and actor.in_flight < self.ex.blocks_per_actor:
                block = self._next_block(rows)
                if block is None:
                    return
                ref = actor.handle.grade_block.remote(self._send(block))
                actor.in_flight += 1
                self.in_flight[ref] = (actor, block)

    def _collect(self, ref: ray.ObjectRef[JsonValue]) -> None:
        if ref in self.ex._actors:  # an actor said it is ready (or could not start)
            actor = self.ex._actors[ref]
            try:
                actor.info = ray.get(ref)
                actor.ready = True
                isolation = self.ex._stats.setdefault("node_isolation", {})
                mode = str(actor.info.get("isolation"))
                isolation[mode] = isolation.get(mode, 0) + 1
            except RayTaskError as exc:
                raise ExecutorError(f"a grading actor could not start on a Ray node: {exc}") from exc
            except RayError as exc:
                log.warning("a grading actor was lost before it started: %s", exc)
                self.ex._lose(actor)
                self.ex._plan_actors(self.definition_json)
            return
        actor, block = self.in_flight.pop(ref)
        actor.in_flight -= 1
        try:
            outcomes, seconds = ray.get(ref)
        except RayTaskError:
            raise  # a bug in the actor's code: the same as a bug in the local engine's loop
        except RayError as exc:  # the actor or its node died: the block goes to another actor
            for other_ref, (other_actor, other_block) in list(self.in_flight.items()):
                if other_actor is actor:
                    self.in_flight.pop(other_ref)
                    self._requeue(other_block, type(exc).__name__)
            self._requeue(block, type(exc).__name__)
            if actor in self.ex._actors.values():
                self.ex._lose(actor)
                self.ex._plan_actors(self.definition_json)
            return
        self._accept(block, outcomes)
        self._observe(len(block.rows), seconds)

    def _wind_down(self) -> None:
        """Cancelled: actors stop grading, the blocks in flight report what they finished, then stop."""
        actors = list({id(a): a for a in self.ex._actors.values() if a.ready}.values())
        for actor in actors:
            actor.handle.cancel.remote()
        deadline = time.monotonic() + CANCEL_GRACE_SECONDS
        while self.in_flight and time.monotonic() < deadline:
            ready, _ = ray.wait(list(self.in_flight), num_returns=1, timeout=WAIT_SECONDS)
            for ref in ready:
                actor, block = self.in_flight.pop(ref)
                try:
                    outcomes, _seconds = ray.get(ref)
                except RayError:
                    continue  # lost while cancelling: its samples stay for resume
                self._accept(block, outcomes)
        for ref in list(self.in_flight):
            try:
                ray.cancel(ref)
            except (RayError, GetTimeoutError, TypeError, ValueError) as exc:
                log.debug("cancel: %s", exc)
        self.in_flight.clear()
