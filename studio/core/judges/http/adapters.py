"""Provider adapters: our ChatRequest to each API's JSON, and each API's JSON back to ChatResponse.

OpenAI-compatible servers (OpenAI, vLLM, Ollama, llama.cpp's server) share one adapter; they differ
only in which optional fields they fill, e.g. llama.cpp gives ``logprobs.content[].top_logprobs``.
"""

from __future__ import annotations

from typing import Any, Protocol

from studio.core.judges.answers import DEFAULT_TOKENS
from studio.core.judges.http.chat import ChatRequest, ChatResponse, TokenLogprob
from studio.core.models.endpoints import EndpointConfig

from .errors import JudgeError
from .structured import response_format

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024


class MalformedResponse(Exception):
    """The body is not the API's response shape (retried like a transport error)."""


class Adapter(Protocol):
    path: str

    def payload(
        self, config: EndpointConfig, model: str, request: ChatRequest
    ) -> dict[str, Any]: ...

    def headers(self, api_key: str | None) -> dict[str, str]: ...

    def parse(self, body: Any) -> ChatResponse: ...


class OpenAIAdapter:
    path = "chat/completions"

    def payload(self, config: EndpointConfig, model: str, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
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

    def parse(self, body: Any) -> ChatResponse:
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
            logprobs=_openai_logprobs(choice.get("logprobs")),
            prompt_tokens=_count(usage, "prompt_tokens"),
            completion_tokens=_count(usage, "completion_tokens"),
            cached_tokens=_count(details, "cached_tokens"),
            usage_reported=_reported(usage, "prompt_tokens", "completion_tokens"),
            raw=body,
        )


#: more tokens than any model's context holds (the largest are a few million): a usage count above
#: it is not a count but a broken or hostile server, and storing it would overflow SQLite's integers
MAX_REPORTED_TOKENS = 100_000_000


def _reported(block: Any, prompt: str, completion: str) -> bool:
    """Did the answer count its tokens? Both counts, as numbers: a server that leaves either out
    reports nothing a spend cap can trust."""
    return isinstance(block, dict) and all(
        isinstance(block.get(k), (int, float)) and not isinstance(block.get(k), bool) for k in (prompt, completion))


def _count(block: Any, key: str) -> int:
    """A token count from a usage block; a server that omits it (or sends text) counts 0. One that
    is impossible (infinite, or above ``MAX_REPORTED_TOKENS``) makes the answer malformed: that call
    fails with the sentence, and every other sample's result is kept."""
    if not isinstance(block, dict):
        return 0
    value = block.get(key)
    if isinstance(value, float) and value != value:  # NaN: no count
        return 0
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > MAX_REPORTED_TOKENS:
        shown = f"{value:.3g}" if isinstance(value, float) else (
            str(value) if value < 10**15 else f"a {len(str(value)):,}-digit number")
        raise MalformedResponse(f"usage.{key} is {shown}, more tokens than any model's context "
                                f"(at most {MAX_REPORTED_TOKENS:,} are believed)")
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def _openai_logprobs(block: Any) -> list[TokenLogprob] | None:
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
        tokens.append(
            TokenLogprob(token=str(item["token"]), logprob=float(logprob or 0.0), top=top)
        )
    return tokens or None


class AnthropicAdapter:
    path = "messages"

    def payload(self, config: EndpointConfig, model: str, request: ChatRequest) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        turns: list[dict[str, str]] = []
        for message in request.messages:
            if message.role == "system":
                continue
            if turns and turns[-1]["role"] == message.role:  # the API wants alternating roles
                turns[-1]["content"] += "\n\n" + message.content
            else:
                turns.append({"role": message.role, "content": message.content})
        body: dict[str, Any] = {
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
            raise JudgeError("Anthropic's API takes no reasoning_effort; remove it from the grader's "
                                   "sampling_params or use an OpenAI-compatible endpoint")
        return body

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def parse(self, body: Any) -> ChatResponse:
        try:
            blocks = body["content"]
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedResponse(f"no content blocks in the response ({exc!r})") from exc
        usage = body.get("usage") or {}
        # Anthropic's input_tokens leaves out what was read from or written to its prompt cache;
        # prompt_tokens here is every prompt token, as OpenAI counts it, and cached a part of it
        read = _count(usage, "cache_read_input_tokens")
        written = _count(usage, "cache_creation_input_tokens")
        return ChatResponse(
            text=text,
            logprobs=None,
            prompt_tokens=_count(usage, "input_tokens") + read + written,
            completion_tokens=_count(usage, "output_tokens"),
            cached_tokens=read,
            usage_reported=_reported(usage, "input_tokens", "output_tokens"),
            raw=body,
        )


#: the hosts of the providers' own APIs, whose every answer counts its tokens
_COUNTING_HOSTS = ("api.openai.com", "api.anthropic.com", ".openai.azure.com")

NO_USAGE_NOTE = ("may answer without token counts (an OpenAI-compatible server or gateway): with --max-cost "
                 "each such answer is charged at its worst case, the prompt counted here and the answer at "
                 "max_tokens, so the cap holds and the cost shown is an upper bound")


def reports_usage(config: EndpointConfig) -> bool:
    """Does every answer of this endpoint count its tokens? Known only for the providers' own APIs
    (OpenAI, Azure OpenAI, Anthropic); any other server (vLLM, Ollama, llama.cpp, a gateway) may
    leave ``usage`` out, and a dry run, which calls nothing, cannot tell: it says so
    (``NO_USAGE_NOTE``). A real call without usage is charged at its worst case under a cap
    (``client.worst_case_tokens``)."""
    from urllib.parse import urlsplit

    host = (urlsplit(config.base_url).hostname or "").lower()
    return any(host == h or (h.startswith(".") and host.endswith(h)) for h in _COUNTING_HOSTS)


def answer_budget(config: EndpointConfig, request: ChatRequest, default: int = DEFAULT_TOKENS) -> int:
    """Always a bound: the judge's own max_tokens, else the endpoint's, else the call's budget."""
    return request.max_tokens or config.max_tokens or request.answer_tokens or default


class AzureAdapter(OpenAIAdapter):
    """Azure OpenAI: OpenAI's bodies, the deployment in the URL (``EndpointConfig.url_for``) and
    the key in an ``api-key`` header."""

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"api-key": api_key} if api_key else {}


def adapter_for(config: EndpointConfig) -> Adapter:
    if config.kind == "anthropic":
        return AnthropicAdapter()
    return AzureAdapter() if config.kind == "azure" else OpenAIAdapter()
