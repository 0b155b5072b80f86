"""``run --dry-run``: what a run would send its judges and what it could cost, grading nothing.

The judges' own code runs, sample by sample, with a client whose network step is replaced by a
recorder (``GradingContext.dry_run``): the requests are built exactly as in a real run, the response
cache answers what it holds (a hit is not a call), and every other call is counted with its prompt
tokens (the endpoint's tokenizer for OpenAI models, a stated approximation otherwise) and its
``max_tokens``, the bound on its completion. The recorder answers with a minimal reply that fits the
call's JSON schema (a verdict, one claim), so a judge follows its usual path: where the number of
calls depends on what the judge says (a prebuilt judge's claims), the count says it assumed one.
Every part that calls an endpoint with the user's key is counted the same way when its kind says a dry
run can (``Kind.counted``: the prompt judges, an OpenAI criterion's model and embeddings calls); a
function grader's ``ctx`` helpers call as its code decides, so the estimate names them as not counted.
Graders that call no endpoint (builtin, plain function, bash, reward servers) are not run at all.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol, cast

from studio.core.graders.registry import make_scorer
from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.http.adapters import NO_USAGE_NOTE, reports_usage
from studio.core.judges.http.providers import provider_of
from studio.core.judges.tokens import TokenCounter, counter_for
from studio.core.kinds import get_kind
from studio.core.models import GraderDefinition, Sample, walk
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.run_size import samples_to_grade
from studio.core.scoring import GradingContext
from studio.core.store import Library

from .runner import RunOptions
from .usage import cost_range, exact_decimal, format_usd

#: samples handed to a judge's scorer at once while counting
BATCH = 64


@dataclass
class EndpointEstimate:
    calls: int = 0
    prompt_tokens: int = 0
    max_completion_tokens: int = 0
    cache_hits: int = 0
    method: str = ""
    config: EndpointConfig | None = None

    def cost_range(self) -> tuple[Fraction, Fraction] | None:
        return cost_range(self.config, self.prompt_tokens, self.max_completion_tokens)


@dataclass
class GraderEstimate:
    key: str
    version: int
    samples: int
    endpoints: dict[str, EndpointEstimate] = field(default_factory=dict)
    repeats: int = 1
    notes: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return sum(e.calls for e in self.endpoints.values()) * self.repeats

    @property
    def prompt_tokens(self) -> int:
        return sum(e.prompt_tokens for e in self.endpoints.values()) * self.repeats

    @property
    def max_completion_tokens(self) -> int:
        return sum(e.max_completion_tokens for e in self.endpoints.values()) * self.repeats

    @property
    def cache_hits(self) -> int:
        return sum(e.cache_hits for e in self.endpoints.values())

    def cost_range(self) -> tuple[Fraction, Fraction] | None:
        ranges = [e.cost_range() for e in self.endpoints.values()]
        if any(r is None for r in ranges):
            return None
        return (sum((r[0] for r in ranges if r), Fraction(0)) * self.repeats,
                sum((r[1] for r in ranges if r), Fraction(0)) * self.repeats)

    def to_json(self) -> JsonObject:
        cost = self.cost_range()
        return {
            "grader": self.key, "version": self.version, "samples": self.samples, "repeats": self.repeats,
            "judge_calls": self.calls, "cache_hits": self.cache_hits, "prompt_tokens": self.prompt_tokens,
            "max_completion_tokens": self.max_completion_tokens,
            "cost_usd": None if cost is None else {"min": exact_decimal(cost[0]), "max": exact_decimal(cost[1])},
            "endpoints": {name: {"calls": e.calls * self.repeats, "cache_hits": e.cache_hits,
                                 "prompt_tokens": e.prompt_tokens * self.repeats,
                                 "max_completion_tokens": e.max_completion_tokens * self.repeats,
                                 "tokenizer": e.method,
                                 "reports_usage": e.config is not None and reports_usage(e.config)}
                          for name, e in self.endpoints.items()},
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        cost = self.cost_range()
        money = "no price" if cost is None else f"{format_usd(cost[0])} to {format_usd(cost[1])}"
        out = [f"{self.key} v{self.version}: {self.samples:,} samples, {self.calls:,} judge calls"
               + (f" ({self.repeats} repeats)" if self.repeats > 1 else "")
               + f", {self.cache_hits:,} answered by the cache",
               f"  prompt tokens {self.prompt_tokens:,}, completion tokens at most {self.max_completion_tokens:,},"
               f" cost {money}"]
        for name, e in self.endpoints.items():
            out.append(f"  endpoint {name}: {e.calls * self.repeats:,} calls, counted with {e.method}")
            if e.config is not None and not reports_usage(e.config):
                out.append(f"  endpoint {name} {NO_USAGE_NOTE}")
        out += [f"  note: {n}" for n in self.notes]
        return out


class _Caller(Protocol):
    """What ``Recorder.answer`` reads of the judge client that calls it (``judges/http/client.JudgeClient``)."""

    config: EndpointConfig
    model: str


class Recorder:
    """Stands in for the network in a dry run: counts each call and answers it minimally."""

    def __init__(self) -> None:
        self.endpoints: dict[str, EndpointEstimate] = {}
        self.assumed_items = False
        self._lock = threading.Lock()

    def estimate(self, config: EndpointConfig) -> EndpointEstimate:
        return self.endpoints.setdefault(config.name, EndpointEstimate(config=config))

    def hit(self, config: EndpointConfig) -> None:
        with self._lock:
            self.estimate(config).cache_hits += 1

    def answer(self, client: object, path: str, payload: JsonObject) -> JsonObject:
        # the one caller is a JudgeClient passing itself (scoring.DryRunRecorder names it object:
        # scoring sits below the judges and cannot import their client)
        caller = cast(_Caller, client)
        config = caller.config
        counter = counter_for(str(payload.get("model") or caller.model), provider_of(config).openai_encodings)
        if path.rstrip("/").endswith("embeddings"):  # a cosine similarity's texts: input tokens only
            return self._embeddings(config, counter, payload)
        messages = list(payload.get("messages") or [])
        if payload.get("system"):  # Anthropic's system prompt travels beside the messages
            messages.insert(0, {"role": "system", "content": payload["system"]})
        with self._lock:
            est = self.estimate(config)
            est.calls += 1
            est.prompt_tokens += counter.count_messages(messages)
            est.max_completion_tokens += int(payload.get("max_tokens") or 0)
            est.method = counter.method
        text = _reply_text(payload)
        return provider_of(config).answer(text, bool(payload.get("logprobs")))


    def _embeddings(self, config: EndpointConfig, counter: TokenCounter, payload: JsonObject) -> JsonObject:
        """One ``/embeddings`` call counted by its inputs' tokens (it completes nothing), answered
        with one zero vector an input, OpenAI's shape."""
        given = payload.get("input")
        texts = [given] if isinstance(given, str) else [str(t) for t in given] if isinstance(given, list) else []
        with self._lock:
            est = self.estimate(config)
            est.calls += 1
            est.prompt_tokens += sum(counter.count_text(t) for t in texts)
            est.method = counter.method
        return {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [0.0]}
                                           for i in range(len(texts))]}


def _schema_of(payload: JsonObject) -> JsonObject | None:
    fmt = payload.get("response_format")
    if isinstance(fmt, dict):
        inner = fmt.get("json_schema")
        for schema in (inner.get("schema") if isinstance(inner, dict) else None, fmt.get("schema")):
            if isinstance(schema, dict):
                return schema
    return None


def _instance(schema: JsonObject) -> JsonValue:
    """The smallest value a JSON schema accepts (one item for arrays: one claim, one statement)."""
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _instance(v) for k, v in props.items() if isinstance(v, dict)}
    if kind == "array":
        items = schema.get("items")
        return [_instance(items) if isinstance(items, dict) else "item"]
    if kind in ("number", "integer"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "item"


def _reply_text(payload: JsonObject) -> str:
    schema = _schema_of(payload)
    if schema is not None:
        return json.dumps(_instance(schema))
    # a free-text call: a bare number reads as a score, a short list of one item as one claim
    return "1"


def calling_parts(definition: GraderDefinition) -> Iterator[GraderDefinition]:
    """The parts of a grader that call an endpoint (itself, a composite's components, a jury's
    jurors, recursively: ``walk``; the endpoints each names: ``own_endpoints``, as the key check
    and the approvals read them)."""
    for part in walk(definition):
        if part.own_endpoints():
            yield part


async def _count(library: Library, part: GraderDefinition, options: RunOptions, samples: list[Sample],
                 recorder: Recorder) -> None:
    ctx = GradingContext(library=library, endpoint=options.endpoint, use_cache=options.use_cache,
                         concurrency=options.concurrency, dry_run=recorder)
    scorer = make_scorer(part, ctx)
    try:
        for start in range(0, len(samples), BATCH):
            await scorer.score_batch(samples[start:start + BATCH])
    finally:
        await scorer.aclose()


def dry_run(library: Library, grader_key: str | None, dataset_name: str, options: RunOptions | None = None, *,
            repeats: int = 1, graders: list[str] | None = None) -> list[GraderEstimate]:
    """One estimate per grader of the run: a grader, a suite's graders (``grader_key`` a suite key)
    or ``graders`` (``run --graders a,b,c``), grading nothing and writing nothing. The library is
    read first (the dataset, the graders with their definitions, the samples a judge would read),
    so a name or version that is not there is said before any judge is counted; then the judges
    are counted."""
    from .planning import named_graders

    options = options or RunOptions()
    if repeats > 1:  # repeated runs bypass the cache (run --repeat)
        options = options.model_copy(update={"use_cache": False})
    dataset = library.datasets.get(dataset_name)
    named = named_graders(library, grader_key, options.version, graders)
    limit = samples_to_grade(dataset.sample_count, options.limit)
    calling = [(grader, list(calling_parts(grader.definition))) for grader in named]
    samples: list[Sample] = []  # read once, when a grader calls an endpoint
    if any(parts for _, parts in calling):
        samples = [s for _, s in library.datasets.iter_indexed(dataset.id, limit=limit, skip=set())]
    estimates = []
    for grader, parts in calling:
        estimate = GraderEstimate(key=grader.key, version=grader.version, samples=limit, repeats=max(1, repeats))
        estimates.append(estimate)
        if not parts:
            estimate.notes.append(f"a {grader.definition.kind} grader calls no endpoint: nothing to pay for")
            continue
        recorder = Recorder()
        for part in parts:
            kind = get_kind(part.kind)
            if not kind.dry_runs:  # its own code decides its calls (a function grader's ctx helpers)
                estimate.notes.append(f"{part.key}: a {part.kind} grader calls its endpoint as its code "
                                      "decides: those calls are not counted here (the estimate is a lower bound)")
                continue
            asyncio.run(_count(library, part, options, samples, recorder))
            if kind.calls_note:  # a pre-built judge's calls follow its claims
                estimate.notes.append(f"{part.key}: {kind.calls_note}")
        estimate.endpoints = recorder.endpoints
    return estimates
