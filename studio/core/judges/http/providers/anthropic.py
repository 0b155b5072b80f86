"""Anthropic's Messages API: the system prompt beside alternating turns, the key in ``x-api-key``
with the API version, and usage counted without its prompt cache's tokens."""

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
    from studio.core.judges.http.chat import ChatRequest, ChatResponse
    from studio.core.models.endpoints import EndpointConfig

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024


class Anthropic(Provider):
    name = "anthropic"
    label = "Anthropic"
    path = "messages"
    counting_hosts = ("api.anthropic.com",)
    promptfoo_id = "anthropic:messages"
    inspect_prefix = "anthropic"

    def payload(self, config: EndpointConfig, model: str, request: ChatRequest) -> JsonObject:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        turns: list[dict[str, str]] = []
        for message in request.messages:
            if message.role == "system":
                continue
            if turns and turns[-1]["role"] == message.role:  # the API wants alternating roles
                turns[-1]["content"] += "\n\n" + message.content
            else:
                turns.append({"role": message.role, "content": message.content})
        body: JsonObject = {
            "model": model,
            "max_tokens": answer_budget(config, request, ANTHROPIC_DEFAULT_MAX_TOKENS),
            "messages": turns,
        }
        if system:
            body["system"] = system
        temperature = request.temperature if request.temperature is not None else config.temperature
        if temperature is not None:
            body["temperature"] = min(temperature, 1.0)
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.reasoning_effort is not None:  # Anthropic's thinking budget is not an effort level
            from studio.core.judges.http.errors import JudgeError

            raise JudgeError("Anthropic's API takes no reasoning_effort; remove it from the grader's "
                             "sampling_params or use an OpenAI-compatible endpoint")
        return body

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def parse(self, body: JsonValue) -> ChatResponse:
        from studio.core.judges.http.chat import ChatResponse

        try:
            blocks = body["content"]
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedResponse(f"no content blocks in the response ({exc!r})") from exc
        usage = body.get("usage") or {}
        # Anthropic's input_tokens leaves out what was read from or written to its prompt cache;
        # prompt_tokens here is every prompt token, as OpenAI counts it, and cached a part of it
        read = token_count(usage, "cache_read_input_tokens")
        written = token_count(usage, "cache_creation_input_tokens")
        return ChatResponse(
            text=text,
            logprobs=None,
            prompt_tokens=token_count(usage, "input_tokens") + read + written,
            completion_tokens=token_count(usage, "output_tokens"),
            cached_tokens=read,
            usage_reported=usage_reported(usage, "input_tokens", "output_tokens"),
            raw=body,
        )

    def url_for(self, config: EndpointConfig, path: str, model: str | None = None) -> str:
        root = config.base_url if config.base_url.endswith("/v1") else f"{config.base_url}/v1"
        return f"{root}/{path.lstrip('/')}"

    def answer(self, text: str, logprobs: bool) -> JsonObject:
        return {"content": [{"type": "text", "text": text}], "usage": {}}


PROVIDER = Anthropic()
