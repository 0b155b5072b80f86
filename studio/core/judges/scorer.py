"""The engine's entry point for LLM judges: ``make_scorer(grader, ctx)`` for every judge kind.

One scorer per run: it resolves the endpoint (run override > the judge's own > the library's only
one), opens one client, and grades each batch's samples concurrently; the client's semaphore is
what bounds calls in flight. Any failure becomes that sample's error outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from studio.core.json_types import JsonObject
from studio.core.judges.http.cache import ResponseCache
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.credentials import resolve_api_key
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.trace import Trace
from studio.core.kinds import prompt_judge
from studio.core.models import GraderDefinition, JudgeBase, Outcome, Sample
from studio.core.models.endpoints import EndpointConfig
from studio.core.scoring import GradingContext, ScorerBase
from studio.core.store.endpoints import EndpointRepository
from studio.core.store.errors import NoEndpoint


def open_client(
    grader: JudgeBase, ctx: GradingContext, *, config: EndpointConfig | None = None
) -> JudgeClient:
    """The client a judge uses in this run, wired to the library's cache."""
    retries, timeout = grader.call_limits()
    return client_for(ctx, grader.endpoint, grader.model, config=config, retries=retries, timeout=timeout)


def client_for(
    ctx: GradingContext, endpoint: str | None, model: str | None, *, config: EndpointConfig | None = None,
    retries: int | None = None, timeout: float | None = None,
) -> JudgeClient:
    """A client for a grader that names an ``endpoint`` and a ``model`` (a judge, an OpenAI model
    grader): the run's endpoint wins over the grader's, and then the endpoint's own model is used."""
    if ctx.library is None:
        raise NoEndpoint("judges need a library to look up their endpoint")
    engine = ctx.library.engine
    if config is None:
        config = EndpointRepository(engine).resolve(ctx.endpoint, endpoint)
    if ctx.concurrency:  # --concurrency asks for that many calls in flight, within the endpoint's limit
        config = config.model_copy(update={"max_concurrency": min(ctx.concurrency, config.max_concurrency)})
    overridden = bool(ctx.endpoint) and ctx.endpoint != endpoint
    return JudgeClient(
        config,
        api_key=resolve_api_key(config),
        cache=ResponseCache(engine),
        use_cache=ctx.use_cache,
        model=None if overridden else model,
        max_retries=retries,
        timeout=timeout,
        cancel=ctx.cancel,
        budget=ctx.budget,
        dry_run=ctx.dry_run,
        halt=ctx.halt,
    )


class JudgeScorer(ScorerBase):
    def __init__(self, grader: JudgeBase, ctx: GradingContext, client: JudgeClient) -> None:
        self.grader = grader
        self.ctx = ctx
        self.client = client
        self.module = prompt_judge(grader.kind)
        self.memo: JsonObject = {}
        if "score_samples" in ctx.options:
            self.memo["fallback_samples"] = int(ctx.options["score_samples"])
        # calls wait on the server, not on a core: the engine keeps 4 batches of 2x the client's
        # concurrency in flight (io_bound), so its semaphore always has the next call ready
        self.batch_size = max(16, 2 * client.config.max_concurrency)
        self.parallel_batches = 4
        self.io_bound = True
        self.per_sample = True  # score_batch is one call per sample (ScorerBase.per_sample)

    def calls_in_flight(self) -> int | None:
        return self.client.in_flight

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return list(await asyncio.gather(*(self.score_one(s) for s in samples)))

    async def score_one(self, sample: Sample) -> Outcome:
        trace = Trace(self.client)
        if self.ctx.cancel.is_set():
            return trace.failure("cancelled")
        try:
            outcome: Outcome = await self.module.score(self.grader, sample, trace, self.memo)  # a judge module
            return outcome
        except JudgeError as exc:
            return trace.failure(str(exc))
        except Exception as exc:  # a bug must not stop the run; the message says it is one
            return trace.failure(
                f"internal error in the {self.grader.kind} judge: {exc.__class__.__name__}: {exc}"
            )

    async def aclose(self) -> None:
        await self.client.aclose()


def make_scorer(grader: GraderDefinition, ctx: GradingContext) -> JudgeScorer:
    if not isinstance(grader, JudgeBase):  # the factory's boundary: narrows what the registry hands it
        raise TypeError(f"{grader.kind} is not an LLM judge")
    return JudgeScorer(grader, ctx, open_client(grader, ctx))
