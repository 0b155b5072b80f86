"""OpenAI and every OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, LiteLLM, OpenRouter):
one request shape; they differ only in which optional fields they fill, e.g. llama.cpp gives
``logprobs.content[].top_logprobs``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.http.adapters import (
    MalformedResponse,
    answer_budget,
    token_count,
    usage_reported,
)

from . import Provider

if TYPE_CHECKING:
    from studio.core.judges.http.chat import ChatRequest, ChatResponse, TokenLogprob
    from studio.core.models.endpoints import EndpointConfig


class OpenAICompatible(Provider):
    name = "openai"
    label = "OpenAI-compatible"
    path = "chat/completions"
    logprobs = True
    structured = True
    counting_hosts = ("api.openai.com",)
    openai_encodings = True
    promptfoo_id = "openai:chat"

    def payload(self, config: EndpointConfig, model: str, request: ChatRequest) -> JsonObject:
        from studio.core.judges.http.structured import response_format

        body: JsonObject = {
            "model": model,
            "messages": [m.model_dump() for m in request.messages],
        }
        temperature = request.temperature if request.temperature is not None else config.temperature
        if temperature is not None:
            body["temperature"] = temperature
        body["max_tokens"] = answer_budget(config, request)
        if request.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs or 20
        if request.seed is not None:
            body["seed"] = request.seed
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.reasoning_effort is not None:
            body["reasoning_effort"] = request.reasoning_effort
        fmt = response_format(config.structured_output, request.json_schema, request.json_mode)
        if fmt is not None:
            body["response_format"] = fmt
        return body

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def parse(self, body: JsonValue) -> ChatResponse:
        from studio.core.judges.http.chat import ChatResponse

        try:
            choice = body["choices"][0]
            content = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise MalformedResponse(f"no choices[0].message in the response ({exc!r})") from exc
        if not isinstance(content, str):
            raise MalformedResponse("choices[0].message.content is not text")
        usage = body.get("usage") or {}
        details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
        return ChatResponse(
            text=content,
            logprobs=_logprobs(choice.get("logprobs")),
            prompt_tokens=token_count(usage, "prompt_tokens"),
            completion_tokens=token_count(usage, "completion_tokens"),
            cached_tokens=token_count(details, "cached_tokens"),
            usage_reported=usage_reported(usage, "prompt_tokens", "completion_tokens"),
            raw=body,
        )

    def answer(self, text: str, logprobs: bool) -> JsonObject:
        block = None
        if logprobs:
            block = {"content": [{"token": text, "logprob": 0.0, "top_logprobs": [{"token": text, "logprob": 0.0}]}]}
        return {"choices": [{"message": {"role": "assistant", "content": text}, "logprobs": block}], "usage": {}}


def _logprobs(block: JsonValue) -> list[TokenLogprob] | None:
    from studio.core.judges.http.chat import TokenLogprob

    if not isinstance(block, dict) or not isinstance(block.get("content"), list):
        return None
    tokens: list[TokenLogprob] = []
    for item in block["content"]:
        if not isinstance(item, dict) or "token" not in item:
            continue
        top: dict[str, float] = {}
        for alt in item.get("top_logprobs") or []:
            if isinstance(alt, dict) and "token" in alt and alt.get("logprob") is not None:
                token = str(alt["token"])
                top[token] = max(float(alt["logprob"]), top.get(token, float("-inf")))
        logprob = item.get("logprob")
        tokens.append(TokenLogprob(token=str(item["token"]), logprob=float(logprob or 0.0), top=top))
    return tokens or None


PROVIDER = OpenAICompatible()
