"""``javascript`` graders (promptfoo's javascript assertions): JavaScript run by Node in the sandbox.

Each batch goes to a Node worker (``studio.core.sandbox.node``) under the same bubblewrap root,
uid drop, rlimits and seccomp refusals as a Python function grader; the worker calls the code with
promptfoo's (output, context) and normalises what it returns as promptfoo does (pass, score,
reason). Without a node executable every sample fails with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from studio.core.json_types import JsonArray, JsonObject
from studio.core.kinds import Kind, refused
from studio.core.models import JavascriptGrader, Outcome, Sample
from studio.core.models.extractors import ExtractionError, extract
from studio.core.models.pass_rule import promptfoo_passes
from studio.core.sandbox import payloads
from studio.core.sandbox.node import NodePool, cpu_limit, find_node, missing_reason
from studio.core.sandbox.pool import default_size
from studio.core.sandbox.results import OK, to_outcome
from studio.core.sandbox.session import GraderSession, GraderSpec
from studio.core.sandbox.settings import SandboxSettings
from studio.core.scoring import GradingContext, ScorerBase

BATCH_SIZE = 256


@dataclass(frozen=True)
class JavascriptSpec(GraderSpec):
    """``GraderSpec`` with what the Node harness reads at load time."""

    form: str = "inline"
    threshold: float | None = None
    negate: bool = False
    origin: str | None = None

    def load_request(self) -> JsonObject:
        return {"source": self.source, "form": self.form, "function": self.function_name,
                "threshold": self.threshold, "negate": self.negate, "origin": self.origin}


def spec_of(grader: JavascriptGrader, settings: SandboxSettings) -> JavascriptSpec:
    return JavascriptSpec(source=grader.source, contract="promptfoo", function_name=grader.function_name,
                          timeout=grader.timeout_seconds, memory_mb=grader.memory_mb, output_kib=settings.output_kib,
                          form=grader.form, threshold=grader.threshold, negate=grader.negate,
                          origin=grader.origin)


def payload(grader: JavascriptGrader, sample: Sample) -> JsonObject:
    """promptfoo's (output, context) for one sample; an extractor picks the output text."""
    data = payloads.promptfoo(sample)
    context = data["context"]
    del context["config"]  # promptfoo sets context.config only when the assertion has one
    if grader.config is not None:
        context["config"] = grader.config
    context["providerResponse"] = {"output": data["output"]}
    if grader.extractor is not None:
        try:
            data["output"] = extract(sample, grader.extractor)
        except ExtractionError:
            data["output"] = ""
    return data


class JavascriptScorer(ScorerBase):
    batch_size = BATCH_SIZE
    first_batch: int | None = 1

    def __init__(self, grader: JavascriptGrader, ctx: GradingContext, settings: SandboxSettings | None = None) -> None:
        self.grader = grader
        self.ctx = ctx
        sandbox_pool = ctx.options.get("sandbox_pool")
        settings = settings or (sandbox_pool.settings if sandbox_pool is not None else SandboxSettings())
        size = ctx.concurrency or default_size()
        self.parallel_batches = size
        self.pool = NodePool(size, settings, memory_mb=grader.memory_mb, cpu_seconds=cpu_limit(grader.timeout_seconds))
        self.spec = spec_of(grader, settings)
        self.node = find_node()
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="node-batch")
        self._idle: list[GraderSession] = []
        self._all: list[GraderSession] = []

    def _session(self) -> GraderSession:
        if self._idle:
            return self._idle.pop()
        session = GraderSession(self.pool, self.spec)
        self._all.append(session)
        return session

    def score_sync(self, samples: Sequence[Sample]) -> list[Outcome]:
        session = self._session()
        try:
            return self._score(session, samples)
        finally:
            self._idle.append(session)

    def _score(self, session: GraderSession, samples: Sequence[Sample]) -> list[Outcome]:
        if self.node is None:
            return [Outcome.failure(missing_reason()) for _ in samples]
        entries = session.run([payload(self.grader, s) for s in samples], cancel=self.ctx.cancel)
        key, memory_mb, output_kib = self.grader.metric.key, self.spec.memory_mb, self.spec.output_kib
        return [to_outcome(self._decided(e), "promptfoo", key, memory_mb, output_kib) for e in entries]

    def _decided(self, entry: JsonArray) -> JsonArray:
        """A number the code returned, with promptfoo's pass for it and its reason (the harness hands
        a number over undecided: ``pass_rule.promptfoo_passes`` at the assertion's threshold, inverted
        by ``not-javascript``); any other entry as it came."""
        value = entry[2] if len(entry) > 2 and entry[1] == OK else None
        if not (isinstance(value, dict) and value.get("number") is True):
            return entry
        raw = promptfoo_passes(value.get("score"), self.grader.threshold)
        passed = raw != self.grader.negate
        reason = "Assertion passed" if passed else f"Custom function returned {'true' if raw else 'false'}"
        return [*entry[:2], {"pass": passed, "score": value.get("score"), "reason": reason}, *entry[3:]]

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        if self.ctx.cancel.is_set():
            return [Outcome.failure("cancelled") for _ in samples]
        session = self._session()
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, self._score, session, samples)
        finally:
            self._idle.append(session)

    def close(self) -> None:
        for session in self._all:
            session.close()
        self._all.clear()
        self._idle.clear()
        self.pool.close()
        self._executor.shutdown(wait=False)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)


def make_scorer(grader: JavascriptGrader, ctx: GradingContext) -> JavascriptScorer:
    return JavascriptScorer(grader, ctx)


KIND = Kind(kind="javascript", sandboxed=True, model=JavascriptGrader, family="function", rank=10, icon=("mdi6.language-javascript", "#b59a1d"),
    platforms={"adaptive": refused("Adaptive function graders are Python; a JavaScript assertion runs only where Node does "
                                   "(promptfoo)")}, label="JavaScript (promptfoo)", scorer=f"{__name__}:make_scorer", editor="yaml",
            starter={"source": "output.toLowerCase().includes(String(context.vars.expected || '').toLowerCase())"})
