"""A few tiny requests to an endpoint: is it up, how fast, what it supports (the window's "Test"
button, ``grader-studio endpoints test`` and ``grader-studio local-judge``).

Found out, and recorded on the endpoint by ``apply_probe``: whether logprobs come back (a server
that refuses them gets ``supports_logprobs = false``, so range judges sample instead), how to ask
for an exact JSON schema (``structured``), and whether a local server serves one request at a time
(then the endpoint defaults to concurrency 1 instead of queueing 8 requests into timeouts).
"""

from __future__ import annotations

import ipaddress
import time
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from studio.core.json_types import JsonObject
from studio.core.judges.http.chat import ChatRequest, user
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.credentials import resolve_api_key, unset_key_variable
from studio.core.judges.http.providers import provider_of
from studio.core.models.endpoints import EndpointConfig, StructuredOutput

from .errors import EndpointCallError
from .proxies import describe_route
from .structured import PROBE_ORDER

PROBE_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


class ProbeResult(BaseModel):
    endpoint: str
    latency_ms: float
    logprobs: bool
    reply: str
    structured_output: StructuredOutput = "none"
    local: bool = False
    slots: int | None = Field(default=None, description="requests served at once, when known")
    server: str = Field(default="", description="what the server says it is, when it says")
    notes: list[str] = Field(default_factory=list)
    route: str = Field(default="", description="how the calls travelled: direct or which proxy")


def is_local(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def probe_endpoint(config: EndpointConfig, api_key: str | None = None) -> ProbeResult:
    """Raises ``EndpointCallError`` with a readable message when the endpoint does not answer.
    ``api_key``: a key typed in but not stored yet (else the endpoint's own)."""
    try:
        return await _probe(config, api_key)
    except EndpointCallError as exc:
        # the Test button and `endpoints test` say which way the calls went, also on a failure
        raise EndpointCallError(f"{exc}; route: {_route(config)}", attempts=exc.attempts,
                                status=exc.status, rejected=exc.rejected) from None


def _route(config: EndpointConfig) -> str:
    return describe_route(config.url_for("chat/completions"), config.proxy) + (
        f"; also trusting the CAs in {config.ca_bundle}" if config.ca_bundle else "")


async def _probe(config: EndpointConfig, api_key: str | None) -> ProbeResult:
    if not api_key:
        missing = unset_key_variable(config)  # said before a call is sent without a key
        if missing is not None:
            raise EndpointCallError(missing)
    api_key = resolve_api_key(config, typed=api_key)
    notes: list[str] = []
    client = JudgeClient(config, api_key=api_key, max_retries=1)
    try:
        request = ChatRequest(
            messages=[user("Reply with the single word OK.")],
            max_tokens=5,
            logprobs=provider_of(config).logprobs,
            temperature=0.0,
        )
        started = time.perf_counter()
        try:
            response = await client.chat(request)
        except EndpointCallError as exc:
            if not (exc.rejected and request.logprobs):
                raise
            notes.append(f"logprobs refused ({exc}); range judges will sample their score")
            started = time.perf_counter()
            response = await client.chat(request.model_copy(update={"logprobs": False}))
        latency = (time.perf_counter() - started) * 1000
        slots, server = await _slots(config, api_key) if is_local(config.base_url) else (None, "")
    finally:
        await client.aclose()
    structured = await _structured(config, api_key, notes)
    return ProbeResult(
        endpoint=config.name,
        route=_route(config),
        latency_ms=round(latency, 1),
        logprobs=bool(response.logprobs),
        reply=response.text[:200],
        structured_output=structured,
        local=is_local(config.base_url),
        slots=slots,
        server=server,
        notes=notes,
    )


async def _structured(
    config: EndpointConfig, api_key: str | None, notes: list[str]
) -> StructuredOutput:
    """The first schema dialect the server accepts (a refusal moves on to the next)."""
    if not provider_of(config).structured:
        return "none"
    for mode in PROBE_ORDER:
        trial = config.model_copy(update={"structured_output": mode})
        client = JudgeClient(trial, api_key=api_key, max_retries=0)
        request = ChatRequest(
            messages=[user('Reply with the JSON object {"ok": true}.')],
            max_tokens=12,
            temperature=0.0,
            json_mode=True,
            json_schema=PROBE_SCHEMA,
        )
        try:
            await client.chat(request)
        except EndpointCallError as exc:
            if not exc.rejected:
                notes.append(f"structured output not checked: {exc}")
                return "none"
            continue
        finally:
            await client.aclose()
        return mode
    notes.append("the server takes no response_format: judges parse free text")
    return "none"


async def _slots(config: EndpointConfig, api_key: str | None) -> tuple[int | None, str]:
    """Requests a local server serves at once: llama.cpp's server says so at /props;
    llama-cpp-python (whose models are "owned_by": "me") serves one at a time."""
    root = config.base_url.removesuffix("/v1")
    client = JudgeClient(config.model_copy(update={"base_url": root}), api_key=api_key)
    try:
        try:
            props = await client.get("props")
        except (EndpointCallError, ValueError, OSError):
            props = None
        if isinstance(props, dict) and isinstance(props.get("total_slots"), int):
            return props["total_slots"], "llama.cpp server"
        try:
            models = await client.get("v1/models")
        except (EndpointCallError, ValueError, OSError):
            return None, ""
        data = models.get("data") if isinstance(models, dict) else None
        first = data[0] if isinstance(data, list) and data else None
        if isinstance(first, dict) and first.get("owned_by") == "me":
            return 1, "llama-cpp-python"
        return None, ""
    finally:
        await client.aclose()


def apply_probe(config: EndpointConfig, result: ProbeResult) -> tuple[EndpointConfig, list[str]]:
    """The endpoint updated with what the probe found, and sentences saying what changed."""
    update: JsonObject = {
        "supports_logprobs": result.logprobs,
        "structured_output": result.structured_output,
    }
    said: list[str] = []
    if result.local and result.slots == 1 and config.max_concurrency > 1:
        update["max_concurrency"] = 1
        said.append(
            f"{result.server or 'the local server'} answers one request at a time: concurrency "
            f"set to 1 (was {config.max_concurrency}); more would only queue into timeouts"
        )
    return config.model_copy(update=update), said
