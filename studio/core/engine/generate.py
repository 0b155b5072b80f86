"""Generate the outputs under test: send each sample's input turns to a model, store its answers.

Why here and not in a grader: every grader grades a completion already stored; an analyst wants
the grader tried on what a model says *now*, and on what two models say side by side. A generation
reads a source dataset, sends each sample's input turns (everything before the completion, with an
optional system prompt in place of the sample's own) to an endpoint through the judges' HTTP client
(so its concurrency, rate limit, retries and transport are the endpoint's), and stores each answer
as a sample of a new dataset whose ``provenance`` names the source, endpoint, model, parameters,
time, tokens and cost.

Answers are written as they arrive (a writer thread commits whatever has arrived, so a busy
generation pays one commit per batch, not per answer); each stored sample carries the key of the
request that produced it (``metadata.generation.key``: the endpoint, the model, the exact request
and the repeat number), so ``resume`` sends only the requests whose answer is not stored yet: no
answered call is made twice, whatever killed the process. A cancel (Ctrl+C, the window's Cancel,
``max_cost`` reached) stops handing out requests, waits for the calls in flight (they are paid
for) and keeps every answer; the spend passes ``max_cost`` by at most those calls.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject
from studio.core.judges.answers import DEFAULT_TOKENS
from studio.core.judges.http.chat import ChatMessage, ChatRequest, ChatResponse
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.credentials import resolve_api_key
from studio.core.judges.http.errors import EndpointCallError
from studio.core.judges.http.providers import provider_of
from studio.core.models import Sample, SampleRow
from studio.core.models.broken import BrokenRow
from studio.core.models.endpoints import EndpointConfig
from studio.core.near_names import first_free
from studio.core.outside import storable_text
from studio.core.store import Library
from studio.core.store.datasets import DatasetRecord, read_sample
from studio.core.store.endpoints import EndpointRepository

from .budget import Budget, Caps, check_priced
from .usage import Spent, cost_of, cost_range, exact_decimal

#: a generation stops after this many failed calls in a row: the endpoint is not answering
FAILURE_STREAK = 10
#: the first failures kept in the provenance, to say what went wrong
KEPT_ERRORS = 5
#: the roles a chat API takes as they are; other turns (a document, a tool result) go as user turns
CHAT_ROLES = frozenset({"system", "user", "assistant"})

Status = Literal["running", "complete", "stopped", "cancelled", "failed"]


class GenerateError(StudioError):
    """A generation that cannot start: no such dataset or endpoint, a resume that does not match."""


class GenerationSettings(BaseModel):
    """What a generation asks for; stored in the new dataset's provenance (``parameters``)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    endpoint: str
    model: str | None = Field(default=None, description="None = the endpoint's model")
    system: str | None = Field(default=None, description="replaces the samples' own system turns")
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, gt=0)
    samples: int = Field(default=1, ge=1, le=1000, description="answers stored for each sample")
    limit: int | None = Field(default=None, gt=0, description="only the first N source samples")

    def parameters(self) -> JsonObject:
        return {"system": self.system, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "samples": self.samples, "limit": self.limit}


@dataclass(frozen=True, slots=True)
class Job:
    """One request to send: a source sample's input turns, for its ``repeat``-th answer."""

    source_index: int
    repeat: int
    sample: Sample
    request: ChatRequest
    key: str


@dataclass
class GenerationProgress:
    planned: int
    stored: int
    errors: int
    calls: int
    in_flight: int
    elapsed: float
    tally: Spent
    cost: Fraction | None

    @property
    def rate(self) -> float:
        """Answers a second this session (calls answered over the time since it started)."""
        return self.tally.calls / self.elapsed if self.elapsed > 0 else 0.0


@dataclass
class GenerationResult:
    dataset: str
    status: Status
    planned: int
    stored: int
    generated: int  # this session
    errors: list[str]
    tally: Spent
    cost: Fraction | None
    reason: str = ""
    provenance: JsonObject = field(default_factory=dict)


@dataclass
class GenerationEstimate:
    """``generate --dry-run``: the calls a generation would make, their tokens and cost range."""

    calls: int
    already_stored: int
    prompt_tokens: int
    max_completion_tokens: int
    token_method: str
    config: EndpointConfig

    def cost_range(self) -> tuple[Fraction, Fraction] | None:
        return cost_range(self.config, self.prompt_tokens, self.max_completion_tokens)


# --- requests ---------------------------------------------------------------------------------


def request_for(sample: Sample, settings: GenerationSettings, repeat: int) -> ChatRequest:
    """The chat request a sample's input turns make (the stored completion is never sent)."""
    messages: list[ChatMessage] = []
    if settings.system is not None:
        messages.append(ChatMessage(role="system", content=settings.system))
    for turn in sample.messages:
        if turn.role == "system" and settings.system is not None:
            continue
        if turn.role in CHAT_ROLES:
            messages.append(ChatMessage(role=turn.role, content=turn.content))
        else:
            messages.append(ChatMessage(role="user", content=f"[{turn.role}]\n{turn.content}"))
    if not any(m.role == "user" for m in messages):
        raise GenerateError(f"sample {sample.id!r} has no input turn to send (no user message)")
    # several answers a sample: a seed apiece, so a server that honours seeds answers each anew
    seed = repeat if settings.samples > 1 else None
    return ChatRequest(messages=messages, temperature=settings.temperature, max_tokens=settings.max_tokens,
                       seed=seed)


def request_key(config: EndpointConfig, model: str, request: ChatRequest, repeat: int) -> str:
    """Names one request: the endpoint, the model, the exact request and which repeat it is. The
    endpoint by its name, not its address: a local server restarted on another port is the same
    model under test, and a resume must not ask it again."""
    head = json.dumps([config.kind, config.name, model, repeat], ensure_ascii=False)
    return hashlib.sha256(head.encode() + b"\n" + request.model_dump_json().encode()).hexdigest()


def _stored_id(sample: Sample, repeat: int, samples: int) -> str:
    return sample.id if samples == 1 else f"{sample.id}#{repeat + 1}"


#: a generated dataset's order: its source's, then each sample's answers in turn
ORDER = ("$.metadata.generation.source_index", "$.metadata.generation.repeat")


# --- planning ---------------------------------------------------------------------------------


def endpoint_config(library: Library, name: str, concurrency: int | None = None) -> EndpointConfig:
    """The endpoint ``name`` as stored, its calls in flight narrowed to ``concurrency`` (1 or more:
    ``generate`` refuses a smaller one before it reads the library)."""
    from studio.core.store.errors import NotFound

    try:
        config = EndpointRepository.of(library).get(name)
    except NotFound:
        raise GenerateError(f"no endpoint named {name!r} (add one with `grader-studio endpoints add`)") from None
    if concurrency is not None:
        config = config.model_copy(update={"max_concurrency": min(concurrency, config.max_concurrency)})
    return config


def plan(library: Library, settings: GenerationSettings, config: EndpointConfig,
         done: set[str] | frozenset[str] = frozenset()) -> tuple[int, Iterator[Job | str]]:
    """(requests in all, the jobs whose answer is not stored yet, in source order). The jobs are
    made as they are taken, so the first calls go out while later samples are still being read;
    a sample that cannot be sent (no input turn, a stored row that is no sample) is the sentence
    saying why in its place, and the samples after it are still sent."""
    from studio.core.store.errors import NotFound

    try:
        source = library.datasets.get(settings.source)
    except NotFound:
        raise GenerateError(f"no dataset named {settings.source!r}") from None
    count = source.sample_count if settings.limit is None else min(settings.limit, source.sample_count)
    if count == 0:
        raise GenerateError(f"dataset {settings.source!r} has no samples to generate from")
    model = settings.model or config.model

    def jobs() -> Iterator[Job | str]:
        for index, _, data in library.datasets.iter_raw(source.id, limit=settings.limit):
            sample = read_sample(lambda: source, index, data)
            if isinstance(sample, BrokenRow):  # a teammate's row that is no sample: its answers are missing
                yield sample.sentence()
                continue
            for repeat in range(settings.samples):
                try:
                    request = request_for(sample, settings, repeat)
                except GenerateError as exc:
                    yield str(exc)
                    break
                key = request_key(config, model, request, repeat)
                if key not in done and slot(sample.id, repeat) not in done:
                    yield Job(index, repeat, sample, request, key)

    return count * settings.samples, jobs()


def slot(source_id: str, repeat: int) -> str:
    """A stored answer's place: which source sample, which repeat (never two answers in one)."""
    return f"slot\n{source_id}\n{repeat}"


def stored_keys(library: Library, record: DatasetRecord) -> set[str]:
    """The request keys and the slots ``record``'s answers fill: a resume sends neither again."""
    keys = set()
    for index, _, data in library.datasets.iter_raw(record.id):
        sample = read_sample(lambda: record, index, data)
        if isinstance(sample, BrokenRow):  # an answer row a teammate broke: nothing known of its call
            continue
        info = sample.metadata.get("generation") or {}
        if info.get("key"):
            keys.add(info["key"])
        if info.get("source_id") is not None:
            keys.add(slot(str(info["source_id"]), int(info.get("repeat") or 0)))
    return keys


def estimate(library: Library, settings: GenerationSettings, *, name: str | None = None,
             resume: bool = False) -> GenerationEstimate:
    """What ``generate`` would send (no call is made): calls, prompt tokens, the answers' bound."""
    from studio.core.judges.tokens import counter_for

    done: set[str] = set()
    if resume and name is not None:
        settings = resumed_settings(library, name, settings)
        done = stored_keys(library, library.datasets.get(name))
    config = endpoint_config(library, settings.endpoint)
    planned, pending = plan(library, settings, config, done)
    jobs = [job for job in pending if isinstance(job, Job)]
    model = settings.model or config.model
    counter = counter_for(model, provider_of(config).openai_encodings)
    bound = settings.max_tokens or config.max_tokens or DEFAULT_TOKENS
    prompt = sum(counter.count_messages([m.model_dump() for m in job.request.messages]) for job in jobs)
    return GenerationEstimate(calls=len(jobs), already_stored=planned - len(jobs), prompt_tokens=prompt,
                              max_completion_tokens=bound * len(jobs), token_method=counter.method,
                              config=config)


def output_name(source: str, endpoint: str) -> str:
    """SOURCE-ENDPOINT: the dataset a generation writes when not named (``run --generate-with``)."""
    return f"{source}-{endpoint}"


def proposed_name(library: Library, source: str, endpoint: str) -> str:
    """``output_name``, or the first free variant of it (``near_names.first_free``) when a live dataset
    has it: what the window proposes for a new generation, never a name that exists."""
    return first_free(output_name(source, endpoint), (d.name for d in library.datasets.list()))


def resumed_settings(library: Library, name: str, given: GenerationSettings | None) -> GenerationSettings:
    """The settings a generation of ``name`` was started with; ``given`` must not contradict them."""
    from studio.core.store.errors import NotFound

    try:
        record = library.datasets.get(name)
    except NotFound:
        raise GenerateError(f"no generated dataset named {name!r} to resume") from None
    provenance = record.provenance or {}
    if provenance.get("kind") != "generated":
        raise GenerateError(f"dataset {name!r} was not made by `generate`: there is nothing to resume")
    stored = GenerationSettings(source=provenance["source_dataset"], endpoint=provenance["endpoint"],
                                model=provenance.get("model"), **provenance.get("parameters", {}))
    if given is not None:
        differing: list[str] = [f for f in ("source", "endpoint", "system", "temperature", "max_tokens", "samples", "limit")
                     if f in given.model_fields_set and getattr(given, f) != getattr(stored, f)]
        if given.model is not None and given.model != stored.model:
            differing.append("model")
        if differing:
            raise GenerateError(
                f"{name!r} was generated with other {', '.join(differing)}: resume it as it was started "
                "(leave those options out) or generate under a new name")
    return stored


# --- running ----------------------------------------------------------------------------------


class _Writer:
    """Commits answers as they arrive, on its own thread: whatever has arrived by the time the
    previous commit ends goes in the next one, with the provenance so far. ``put`` returns a future
    done once the answer is committed: a worker waits for it before anything else (its next call),
    so a generation killed at any moment has stored every answer but those still being committed,
    and ``--resume`` repeats no call whose answer was stored."""

    def __init__(self, library: Library, dataset_id: int, provenance: Callable[[], JsonObject]) -> None:
        self._library = library
        self._dataset_id = dataset_id
        self._provenance = provenance
        self._queue: queue.SimpleQueue[tuple[SampleRow, Future[None]] | None] = queue.SimpleQueue()
        self.stored = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="generate-writer", daemon=True)
        self._thread.start()

    def put(self, sample: SampleRow) -> Future[None]:
        if self.error is not None:
            raise self.error
        done: Future[None] = Future()
        self._queue.put((sample, done))
        return done

    def _loop(self) -> None:
        closing = False
        while not closing:
            batch: list[tuple[SampleRow, Future[None]]] = []
            item = self._queue.get()
            while True:  # no wait for more: the answers that came during the last commit join this one
                if item is None:
                    closing = True
                else:
                    batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if not batch:
                continue
            if self.error is None:
                try:
                    provenance = {**self._provenance(), "stored": self.stored + len(batch)}
                    self.stored = self._library.datasets.append(self._dataset_id, [row for row, _ in batch],
                                                                provenance)
                except BaseException as exc:  # reported by put(), close() and the futures: a full disk, a lock
                    self.error = exc
            for _, done in batch:
                if self.error is None:
                    done.set_result(None)
                else:
                    done.set_exception(self.error)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise self.error


class _State:
    def __init__(self, config: EndpointConfig, previous: JsonObject) -> None:
        self.config = config
        self.tally = Spent()
        self.errors: list[str] = list(previous.get("error_examples") or [])
        self.error_count = int(previous.get("errors") or 0)
        self.streak = 0
        self.failed = ""
        self.started = time.perf_counter()
        # what earlier sessions of this generation spent (a resume adds to it)
        self.before = Spent(int(previous.get("calls") or 0), int(previous.get("prompt_tokens") or 0),
                            int(previous.get("completion_tokens") or 0), int(previous.get("cached_tokens") or 0))

    def answered(self, response: ChatResponse) -> None:
        self.streak = 0
        self.tally.add(Spent(1, response.prompt_tokens, response.completion_tokens, response.cached_tokens))

    def fail(self, message: str) -> None:
        self.streak += 1
        self.error_count += 1
        if len(self.errors) < KEPT_ERRORS:
            self.errors.append(message)

    def total(self) -> Spent:
        total = Spent()
        total.add(self.before)
        total.add(self.tally)
        return total


def _check_can_start(config: EndpointConfig, max_cost: Decimal | None, max_spend_tokens: int | None) -> None:
    """Refused before anything is written: a cost cap on an unpriced endpoint, or an endpoint
    nothing answers at (every call would fail after its retries)."""
    from .preflight import EndpointUnreachable, check_reachable

    check_priced(Caps(max_cost=max_cost, max_tokens=max_spend_tokens), [config])
    try:
        check_reachable(config)
    except EndpointUnreachable as exc:
        reason = str(exc).split("; the run was not started")[0]
        raise GenerateError(f"{reason}; nothing was generated") from None


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _provenance(settings: GenerationSettings, config: EndpointConfig, started: str, planned: int) -> JsonObject:
    return {"kind": "generated", "source_dataset": settings.source, "endpoint": config.name,
            "endpoint_kind": config.kind, "endpoint_label": config.label,
            "model": settings.model or config.model, "parameters": settings.parameters(),
            "started_at": started, "finished_at": None, "status": "running", "planned": planned}


def _usage_fields(state: _State) -> JsonObject:
    total = state.total()
    cost = cost_of(total, state.config)
    return {"calls": total.calls, "prompt_tokens": total.prompt_tokens,
            "completion_tokens": total.completion_tokens, "cached_tokens": total.cached_tokens,
            "cost_usd": None if cost is None else exact_decimal(cost),
            "errors": state.error_count, "error_examples": list(state.errors)}


def generate(library: Library, name: str, settings: GenerationSettings | None, *, resume: bool = False,
             concurrency: int | None = None, max_cost: Decimal | None = None,
             max_spend_tokens: int | None = None, cancel: threading.Event | None = None,
             on_progress: Callable[[GenerationProgress], None] | None = None) -> GenerationResult:
    """Generate into dataset ``name`` (a new one, or the unfinished one ``resume`` continues).

    ``max_cost`` / ``max_spend_tokens`` cap what the generation spends in all (earlier sessions
    included): no call starts past a cap, and the calls in flight finish and are kept."""
    cancel = cancel or threading.Event()
    if concurrency is not None and concurrency < 1:  # needs no library: said before it is read
        raise GenerateError("--concurrency must be 1 or more")
    if resume:
        settings = resumed_settings(library, name, settings)
        record = library.datasets.get(name)
        provenance = dict(record.provenance or {})
        config = endpoint_config(library, settings.endpoint, concurrency)
        _check_can_start(config, max_cost, max_spend_tokens)
        api_key = resolve_api_key(config)  # refused (an endpoint not approved here): nothing changed
        planned, jobs = plan(library, settings, config, stored_keys(library, record))
        provenance.update(status="running", finished_at=None, planned=planned)
        library.datasets.set_provenance(record.id, provenance)
    else:
        if settings is None:
            raise GenerateError("generate needs a source dataset and an endpoint")
        config = endpoint_config(library, settings.endpoint, concurrency)
        _check_can_start(config, max_cost, max_spend_tokens)
        api_key = resolve_api_key(config)  # refused (an endpoint not approved here): no dataset made
        planned, jobs = plan(library, settings, config)
        provenance = _provenance(settings, config, _stamp(), planned)
        record = library.datasets.open_generated(
            name, provenance, source=f"generated from {settings.source} by {config.name}")
    caps = Caps(max_cost=max_cost, max_tokens=max_spend_tokens)
    state = _State(config, provenance)
    budget = Budget(caps, cancel, spent=state.total(), spent_cost=cost_of(state.total(), config) or Fraction(0)) \
        if caps.any else None

    def snapshot() -> JsonObject:
        return {**provenance, **_usage_fields(state)}

    writer = _Writer(library, record.id, snapshot)
    writer.stored = record.sample_count  # a resumed generation's answers so far
    model = settings.model or config.model
    client = JudgeClient(config, api_key=api_key, cache=None, use_cache=False, model=model,
                         cancel=cancel, budget=budget)

    def report() -> None:
        if on_progress is not None:
            total = state.total()
            on_progress(GenerationProgress(
                planned=planned, stored=record.sample_count + state.tally.calls, errors=state.error_count,
                calls=client.calls, in_flight=client.in_flight, elapsed=time.perf_counter() - state.started,
                tally=total, cost=cost_of(total, config)))

    async def work() -> None:
        pending = jobs

        async def worker() -> None:
            while not cancel.is_set():
                job = next(pending, None)
                if job is None:
                    return
                if isinstance(job, str):  # a sample with nothing to send: its answer is missing
                    state.fail(job)
                    continue
                try:
                    response = await client.chat(job.request)
                except EndpointCallError as exc:
                    if cancel.is_set() and str(exc) == "cancelled":
                        return
                    state.fail(f"{job.sample.id}: {exc}")
                    if state.streak >= FAILURE_STREAK:
                        state.failed = f"{state.streak} calls in a row failed; the last: {exc}"
                        cancel.set()
                    report()
                    continue
                state.answered(response)
                # the stored form is made here, not on the writer's thread: that thread then holds
                # the GIL only briefly, and the event loop's sends never queue behind it
                # stored before anything else: this worker's next call waits for the commit
                await asyncio.wrap_future(writer.put(SampleRow.of(_answer(job, response, settings))))
                report()

        try:
            await asyncio.gather(*(worker() for _ in range(max(1, min(config.max_concurrency, planned)))))
        finally:
            await client.aclose()

    report()
    interrupted = False
    try:
        asyncio.run(work())
    except KeyboardInterrupt:  # a second Ctrl+C: what arrived is still written below
        interrupted = True
        raise
    finally:
        writer.close()
        if state.tally.calls:
            library.datasets.reorder(record.id, ORDER)
        stored = library.datasets.by_id(record.id).sample_count
        if state.failed:
            status: Status = "failed"
            reason = state.failed
        elif budget is not None and budget.stopped:
            status, reason = "stopped", budget.reason.removeprefix("stopped: ")
        elif cancel.is_set() or interrupted:
            status, reason = "cancelled", "cancelled; the answers so far are kept"
        elif stored < planned:
            status = "stopped"
            reason = f"{planned - stored} call(s) failed"  # each face says how to resume
        else:
            status, reason = "complete", ""
        provenance.update(_usage_fields(state), status=status, finished_at=_stamp(), stored=stored)
        library.datasets.set_provenance(record.id, provenance)
    return GenerationResult(dataset=name, status=status, planned=planned, stored=stored,
                            generated=state.tally.calls, errors=list(state.errors), tally=state.total(),
                            cost=cost_of(state.total(), config), reason=reason, provenance=provenance)


def _answer(job: Job, response: ChatResponse, settings: GenerationSettings) -> Sample:
    source = job.sample
    metadata = {**source.metadata, "generation": {
        "source_id": source.id, "source_index": job.source_index, "repeat": job.repeat, "key": job.key,
        "prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens,
        "latency_ms": round(response.latency_ms, 1)}}
    # the source row's fields stay (graders written against a platform's row shape read them), but
    # not one holding the old completion: a grader reading it would grade what the model did not say
    fields = {k: v for k, v in source.fields.items() if not (source.completion and v == source.completion)}
    # every part is a validated value already (the source sample, the parsed answer): no re-validation
    return Sample.model_construct(id=_stored_id(source, job.repeat, settings.samples), messages=source.messages,
                                  completion=storable_text(response.text), expected=source.expected, metadata=metadata,
                                  fields=fields)
