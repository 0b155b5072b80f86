"""The one interface between the engine and every grader kind.

A scorer grades batches of samples and returns one ``Outcome`` per sample, in order. It never raises
for a sample's failure: a crash, timeout, endpoint error or invalid return becomes that sample's
``Outcome`` (status error/invalid) so the run goes on. Scorers are built per run by
``studio.core.graders.registry.make_scorer``, used from one asyncio loop, and closed at the end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import GraderDefinition, Outcome, Sample
from studio.core.models.endpoints import EndpointConfig

if TYPE_CHECKING:
    from studio.core.store.library import Library


#: one result row as the store writes it (``store.runs.outcome_values``: run id, then its columns)
ResultRowValues = tuple[object, ...]
#: the ``texts`` lane's row: (idx, sample id, completion, expected, the sample's JSON or None)
TextRow = tuple[int, str, str | None, str | None, str | None]

#: the MKA1 model bridge: (call kind, its JSON arguments) -> the model's JSON answer

ModelBridge = Callable[[str, JsonObject], JsonObject]


class RunBudget(Protocol):
    """The run's spend cap as judge clients and the run read it (engine/budget.py ``Budget``)."""

    stopped: bool

    @property
    def reason(self) -> str: ...

    def admit(self) -> bool: ...

    def spend(self, config: EndpointConfig, prompt_tokens: int, completion_tokens: int,
              cached_tokens: int = 0) -> None: ...

    def to_json(self) -> JsonObject: ...


class DryRunRecorder(Protocol):
    """``run --dry-run``'s stand-in for the network (engine/dry_run.py ``Recorder``)."""

    def hit(self, config: EndpointConfig) -> None: ...

    def answer(self, client: object, path: str, payload: JsonObject) -> JsonValue: ...


@dataclass
class GradingContext:

    """What a scorer may use besides its definition.

    ``library`` resolves named endpoints (and holds the judge response cache); ``endpoint`` overrides
    the judge's endpoint for this run; ``cancel`` is set when the user cancels: long calls should
    stop promptly and report an error outcome ("cancelled") rather than block.
    """

    library: Library | None = None
    endpoint: str | None = None
    use_cache: bool = True
    concurrency: int | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    options: JsonObject = field(default_factory=dict)
    #: makes the model bridge (MKA1 ``ctx.responses_create``) for an endpoint name; set by the
    #: grader kind that needs one, so this low layer never imports the judges
    bridge_factory: Callable[[str | None], ModelBridge] | None = None
    #: the run's spend cap (engine/budget.py ``Budget``): judge clients ask it before each call
    budget: RunBudget | None = None
    #: ``run --dry-run``'s recorder (engine/dry_run.py): a judge call the cache cannot answer goes
    #: to its ``answer(client, path, payload)`` instead of the network
    dry_run: DryRunRecorder | None = None
    #: why the run stops before it is done because no call could succeed (an endpoint refused its
    #: key, a proxy its credentials): set once by ``halt``
    halted: str | None = None

    def halt(self, reason: str) -> None:
        """Stop the run: no sample is started from now on, and those in flight that fail are left
        ungraded (the engine drops their errors), so ``resume`` grades them once the cause is fixed."""
        if self.halted is None:
            self.halted = reason
        self.cancel.set()

    def model_bridge(self, endpoint: str | None = None) -> ModelBridge | None:
        """The run's one model bridge, made on first request and shared by every grader in the run.

        ``None`` when nothing can make one. The run's ``endpoint`` wins over the grader's.
        """
        bridge: ModelBridge | None = self.options.get("model_bridge")  # made below, or a test's
        if bridge is None and self.bridge_factory is not None:
            bridge = self.options["model_bridge"] = self.bridge_factory(self.endpoint or endpoint)
        return bridge

    def close(self) -> None:
        """Release what the context made for the run (the model bridge's thread and connections)."""
        bridge = self.options.pop("model_bridge", None)
        if bridge is not None and hasattr(bridge, "close"):
            bridge.close()


#: the ways the engine hands a scorer its samples. Every scorer takes parsed samples
#: (``score_batch``); a scorer declares the others it takes in ``lanes`` (within what its kind's
#: descriptor declares, ``Kind.lanes``), and the engine calls those methods directly:
#: ``values``: parsed samples, a plain score returned as a float (``score_values``);
#: ``raw``: (sample id, stored JSON) pairs, never parsed in the studio (``score_raw_batch``);
#: ``rows``: (idx, sample id, stored JSON) triples straight to the store's result rows (``score_raw_rows``);
#: ``texts``: (idx, sample id, completion, expected, JSON) text rows (``score_texts``).
LANES = ("samples", "values", "raw", "rows", "texts")
Lane = Literal["samples", "values", "raw", "rows", "texts"]
SAMPLES: frozenset[Lane] = frozenset({"samples"})


class LaneNotDeclared(NotImplementedError):
    """The engine called a lane the scorer does not declare: a bug in the engine or the scorer."""


@runtime_checkable
class Scorer(Protocol):
    """What the engine calls on every scorer, without probing: the lanes a scorer takes are
    declared (``lanes``), and every lane's method exists (``ScorerBase`` refuses an undeclared one)."""

    #: samples per ``score_batch`` call; ``None`` means the whole dataset at once (MKA1 batch contract)
    batch_size: int | None
    #: batches the engine keeps in flight at once
    parallel_batches: int
    #: the lanes this scorer takes, for this definition ("samples" always)
    lanes: frozenset[Lane]
    #: see ``ScorerBase`` for each
    io_bound: bool
    min_batch: int
    first_batch: int | None
    per_sample: bool

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]: ...

    async def score_values(self, samples: Sequence[Sample]) -> list[float | Outcome]: ...

    async def score_raw_batch(self, rows: Sequence[tuple[str, str]]) -> list[Outcome]: ...

    async def score_raw_rows(self, run_id: int, batch: Sequence[tuple[int, str, str]]) -> list[ResultRowValues]: ...

    async def score_texts(self, rows: Sequence[TextRow]) -> list[float | Outcome]: ...

    def calls_in_flight(self) -> int | None: ...

    def run_metrics(self) -> dict[str, float]:
        """Run-level metrics the grader reported (MKA1 ``grade_batch`` ``metrics``), else {}."""
        ...

    async def aclose(self) -> None: ...


ScorerFactory = Callable[[GraderDefinition, GradingContext], Scorer]


class ScorerBase:
    """Defaults for the protocol: parsed samples only; a lane's method a scorer does not declare
    in ``lanes`` raises ``LaneNotDeclared``."""

    batch_size: int | None = 64
    parallel_batches: int = 1
    lanes: frozenset[Lane] = SAMPLES
    #: true when a sample's time is spent waiting on a server (judges), not computing: the engine then
    #: keeps ``batch_size`` x ``parallel_batches`` samples in flight instead of sizing batches by time
    io_bound: bool = False
    #: the smallest batch worth sending: a scorer that overlaps a batch's samples (an async function
    #: grader) sets its overlap, so sizing batches by time never leaves it one sample at a time
    min_batch: int = 1
    #: the first batch's size while the scorer's speed is unknown (None: the engine's default); later
    #: batches are sized by time
    first_batch: int | None = None
    #: true when ``score_batch`` grades each sample on its own, overlapped (a judge's calls): the
    #: engine then hands such an I/O-bound scorer one sample per call, ``batch_size`` x
    #: ``parallel_batches`` calls at once, so each result is written and shown as it comes back
    #: (a batch of 16 at concurrency 1 moved the window's progress every 16 samples); the writer
    #: still coalesces what arrives into one write and one progress event per ~0.1 s
    per_sample: bool = False

    def calls_in_flight(self) -> int | None:
        """Calls waiting on a server right now (shown in the progress), or None when not applicable."""
        return None

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        raise LaneNotDeclared(f"{type(self).__name__} grades no parsed samples")

    async def score_values(self, samples: Sequence[Sample]) -> list[float | Outcome]:
        """Parsed samples, a plain score as a float (the ``values`` lane); by default ``score_batch``'s
        outcomes, so a suite may call it on every scorer that takes parsed samples."""
        return list(await self.score_batch(samples))

    async def score_raw_batch(self, rows: Sequence[tuple[str, str]]) -> list[Outcome]:
        raise LaneNotDeclared(f"{type(self).__name__} does not declare the raw lane")

    async def score_raw_rows(self, run_id: int, batch: Sequence[tuple[int, str, str]]) -> list[ResultRowValues]:
        raise LaneNotDeclared(f"{type(self).__name__} does not declare the rows lane")

    async def score_texts(self, rows: Sequence[TextRow]) -> list[float | Outcome]:
        raise LaneNotDeclared(f"{type(self).__name__} does not declare the texts lane")

    def run_metrics(self) -> dict[str, float]:
        return {}

    async def aclose(self) -> None:
        return None

