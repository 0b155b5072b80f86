"""External endpoint scorer: Adaptive's reward-server protocol.

POST ``/score`` with ``{turns: [{role, content}], metadata, id}`` answers ``{reward, metadata, id}``;
``/batch_score`` takes ``{requests: [...]}`` and answers ``{responses: [...]}`` (a bare list is
accepted too); ``GET /info`` describes the server. Rewards are not cached: the code behind a URL can
change while the URL stays the same.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.judges.http.adapters import MalformedResponse
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.variables import extracted_completion
from studio.core.kinds import NATIVE, Kind
from studio.core.models import ExternalEndpoint, GraderDefinition, Outcome, Sample, valid_number
from studio.core.models.endpoints import EndpointConfig
from studio.core.scoring import GradingContext, ScorerBase

if TYPE_CHECKING:  # render imports the kinds
    from studio.core.judges.render import RenderedPrompt

from .reward_keys import reward_key


def score_payload(sample: Sample, completion: str | None = None) -> JsonObject:
    thread = sample.thread()
    turns = [{"role": t.role, "content": t.content} for t in sample.messages]
    text = sample.completion if completion is None else completion
    if text is not None:
        turns.append({"role": "assistant", "content": text})
    return {"turns": turns, "metadata": thread.metadata, "id": sample.id}


def _check_score(body: JsonValue) -> None:
    if not isinstance(body, dict) or "reward" not in body:
        raise MalformedResponse("the reward server's answer has no 'reward'")


def _batch_items(body: JsonValue) -> JsonArray | None:
    """The answers of a batch: a bare list, or the ``responses`` list of an object; else None."""
    items = body.get("responses") if isinstance(body, dict) else body
    return items if isinstance(items, list) else None


def _check_batch(body: JsonValue) -> None:
    if _batch_items(body) is None:
        raise MalformedResponse("the reward server's batch answer has no 'responses' list")


def reward_outcome(body: JsonObject, started: float, attempts: int) -> Outcome:
    duration = (time.perf_counter() - started) * 1000
    reward = body.get("reward")
    given = body.get("metadata")
    metadata = given if isinstance(given, dict) else {}
    if not valid_number(reward):
        return Outcome.invalid(
            f"reward is not a finite number: {reward!r}", body, duration_ms=duration
        )
    rationale = metadata.get("reason") or metadata.get("feedback") or metadata.get("rationale")
    return Outcome(
        score=float(reward),
        rationale=str(rationale) if rationale else None,
        details={"server_metadata": metadata, "attempts": attempts},
        raw=body,
        duration_ms=duration,
    )


class ExternalScorer(ScorerBase):
    def __init__(self, grader: ExternalEndpoint, ctx: GradingContext) -> None:
        self.grader = grader
        self.ctx = ctx
        # the key comes from an endpoint the user bound to this URL, never from the file's fields
        api_key, self.key_problem = reward_key(grader, ctx.library)
        config = EndpointConfig(
            name=f"reward-{grader.key}"[:64],
            base_url=grader.url,
            model="reward-server",
            timeout=grader.timeout_seconds,
            max_concurrency=ctx.concurrency or 16,
        )
        self.client = JudgeClient(config, api_key=api_key, cancel=ctx.cancel, halt=ctx.halt)
        self.batch_size = 32 if grader.batch else max(16, 2 * config.max_concurrency)
        self.parallel_batches = 4 if grader.batch else 2
        self.io_bound = True  # waits on the reward server: fixed batches, the client bounds calls
        self.per_sample = not grader.batch  # one request a sample, unless the server takes batches

    def calls_in_flight(self) -> int | None:
        return self.client.in_flight

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        if self.key_problem is not None:
            return [Outcome.failure(self.key_problem) for _ in samples]
        if self.grader.batch:
            return await self._batch(samples)
        return list(await asyncio.gather(*(self._one(s) for s in samples)))

    def _payload(self, sample: Sample) -> JsonObject:
        completion = extracted_completion(self.grader, sample) if self.grader.extractor else None
        return score_payload(sample, completion)

    async def _one(self, sample: Sample) -> Outcome:
        started = time.perf_counter()
        try:
            body, attempts = await self.client.post("score", self._payload(sample), _check_score)
        except JudgeError as exc:
            return Outcome.failure(str(exc), duration_ms=(time.perf_counter() - started) * 1000)
        return reward_outcome(body, started, attempts)

    async def _batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        started = time.perf_counter()
        payload = {"requests": [self._payload(s) for s in samples]}
        try:
            body, attempts = await self.client.post("batch_score", payload, _check_batch)
        except JudgeError as exc:
            return [Outcome.failure(str(exc)) for _ in samples]
        items = _batch_items(body) or []  # _check_batch let only a list through
        by_id = {
            str(i.get("id")): i for i in items if isinstance(i, dict) and i.get("id") is not None
        }
        outcomes = []
        for n, sample in enumerate(samples):
            item = by_id.get(sample.id) or (items[n] if n < len(items) and not by_id else None)
            if not isinstance(item, dict) or "reward" not in item:
                outcomes.append(
                    Outcome.failure(f"the batch answer has no reward for sample {sample.id!r}")
                )
            else:
                outcomes.append(reward_outcome(item, started, attempts))
        return outcomes

    async def info(self) -> JsonValue:
        return await self.client.get("info")

    async def aclose(self) -> None:
        await self.client.aclose()


def make_scorer(grader: GraderDefinition, ctx: GradingContext) -> ExternalScorer:
    if not isinstance(grader, ExternalEndpoint):  # the factory's boundary: narrows what the registry hands it
        raise TypeError(f"{grader.kind} is not an external endpoint")
    return ExternalScorer(grader, ctx)


def render_request(grader: ExternalEndpoint, sample: Sample) -> RenderedPrompt:
    """The JSON the reward server would receive for ``sample`` (the designer's preview)."""
    import json

    from studio.core.judges.http.chat import user
    from studio.core.judges.render import RenderedCall, RenderedPrompt

    completion = extracted_completion(grader, sample) if grader.extractor else None
    body = json.dumps(score_payload(sample, completion), indent=2, ensure_ascii=False)
    call = RenderedCall(label=f"POST {grader.url.rstrip('/')}/score", messages=[user(body)])
    return RenderedPrompt(kind=grader.kind, calls=[call], notes=["a reward server receives JSON, not a prompt"])


KIND = Kind(kind="external_endpoint", render=render_request, model=ExternalEndpoint, family="endpoint", rank=0, icon=("mdi6.web", "#c0392b"),
    platforms={"adaptive": NATIVE}, label="External endpoint", scorer=f"{__name__}:make_scorer", editor="form",
            starter={"url": "http://127.0.0.1:8766"})
