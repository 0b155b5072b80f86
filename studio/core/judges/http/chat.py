"""The provider-neutral shape of one judge call and its answer."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.json_types import JsonObject, JsonValue

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    role: Role
    content: str


class ChatRequest(BaseModel):
    """What a judge asks; adapters turn it into each provider's JSON (the cache key is that JSON)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    messages: list[ChatMessage]
    temperature: float | None = None
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    seed: int | None = None
    #: nucleus sampling and a reasoning model's effort (an OpenAI grader's ``sampling_params``); sent
    #: only when set, so every other request (and its cache key) is as it was
    top_p: float | None = None
    reasoning_effort: str | None = None
    json_mode: bool = False
    # the budget suited to this call's answer, used when neither the judge nor the endpoint sets
    # max_tokens: no call goes out unbounded (a local server would generate to its context's end)
    answer_tokens: int | None = None
    # the answer's exact JSON schema, asked for through whatever the endpoint supports
    json_schema: JsonObject | None = None


class TokenLogprob(BaseModel):
    """One generated token, its log-probability and the alternatives the server reported."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)


class ChatResponse(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    text: str
    logprobs: list[TokenLogprob] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: of ``prompt_tokens``, those the endpoint served from its prompt cache (billed cheaper)
    cached_tokens: int = 0
    cached: bool = False
    #: False: the answer carried no token counts (a server that omits ``usage``); under a spend cap
    #: the client charges such a call at its worst case (``worst_case_tokens``)
    usage_reported: bool = True
    attempts: int = 1
    latency_ms: float = 0.0
    queue_ms: float = 0.0  # waiting for a connection slot (and the rate limit), not the server
    raw: JsonValue = None


def system(text: str) -> ChatMessage:
    return ChatMessage(role="system", content=text)


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def softmax(logprobs: dict[int, float]) -> dict[int, float]:
    """Normalise log-probabilities over exactly the keys given (the range's integers only)."""
    if not logprobs:
        return {}
    top = max(logprobs.values())
    weights = {k: math.exp(v - top) for k, v in logprobs.items()}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}
