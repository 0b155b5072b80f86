"""What every endpoint provider shares: reading token counts from an answer, a call's answer
budget, whether an endpoint counts its tokens, and the provider of an endpoint
(``judges/http/providers``: one module per provider builds its request and reads its answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.core.json_types import JsonValue
from studio.core.judges.answers import DEFAULT_TOKENS

if TYPE_CHECKING:
    from studio.core.judges.http.chat import ChatRequest
    from studio.core.judges.http.providers import Provider
    from studio.core.models.endpoints import EndpointConfig


class MalformedResponse(Exception):
    """The body is not the API's response shape (retried like a transport error)."""


#: more tokens than any model's context holds (the largest are a few million): a usage count above
#: it is not a count but a broken or hostile server, and storing it would overflow SQLite's integers
MAX_REPORTED_TOKENS = 100_000_000


def usage_reported(block: JsonValue, prompt: str, completion: str) -> bool:
    """Did the answer count its tokens? Both counts, as numbers: a server that leaves either out
    reports nothing a spend cap can trust."""
    return isinstance(block, dict) and all(
        isinstance(block.get(k), (int, float)) and not isinstance(block.get(k), bool) for k in (prompt, completion))


def token_count(block: JsonValue, key: str) -> int:
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


NO_USAGE_NOTE = ("may answer without token counts (an OpenAI-compatible server or gateway): with --max-cost "
                 "each such answer is charged at its worst case, the prompt counted here and the answer at "
                 "max_tokens, so the cap holds and the cost shown is an upper bound")


def reports_usage(config: EndpointConfig) -> bool:
    """Does every answer of this endpoint count its tokens? Known only for the providers' own APIs
    (each provider's ``counting_hosts``); any other server (vLLM, Ollama, llama.cpp, a gateway) may
    leave ``usage`` out, and a dry run, which calls nothing, cannot tell: it says so
    (``NO_USAGE_NOTE``). A real call without usage is charged at its worst case under a cap
    (``client.worst_case_tokens``)."""
    from urllib.parse import urlsplit

    from studio.core.judges.http.providers import providers

    host = (urlsplit(config.base_url).hostname or "").lower()
    hosts = [h for provider in providers().values() for h in provider.counting_hosts]
    return any(host == h or (h.startswith(".") and host.endswith(h)) for h in hosts)


def answer_budget(config: EndpointConfig, request: ChatRequest, default: int = DEFAULT_TOKENS) -> int:
    """Always a bound: the judge's own max_tokens, else the endpoint's, else the call's budget."""
    return request.max_tokens or config.max_tokens or request.answer_tokens or default


def adapter_for(config: EndpointConfig) -> Provider:
    """The provider that builds this endpoint's requests and reads its answers."""
    from studio.core.judges.http.providers import provider_of

    return provider_of(config)
