"""One tiny request to an endpoint: is it up, how fast, does it return logprobs (the window's
"Test" button and ``grader-studio endpoints test``)."""

from __future__ import annotations

import time

from pydantic import BaseModel

from studio.core.judges.http.chat import ChatRequest, user
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.credentials import resolve_api_key
from studio.core.models.endpoints import EndpointConfig


class ProbeResult(BaseModel):
    endpoint: str
    latency_ms: float
    logprobs: bool
    reply: str


async def probe_endpoint(config: EndpointConfig) -> ProbeResult:
    """Uncached, one retry; raises ``EndpointCallError`` with a readable message on failure."""
    client = JudgeClient(config, api_key=resolve_api_key(config), max_retries=1)
    request = ChatRequest(
        messages=[user("Reply with the single word OK.")],
        max_tokens=5,
        logprobs=True,
        temperature=0.0,
    )
    try:
        started = time.perf_counter()
        response = await client.chat(request)
        latency = (time.perf_counter() - started) * 1000
    finally:
        await client.aclose()
    return ProbeResult(
        endpoint=config.name,
        latency_ms=round(latency, 1),
        logprobs=bool(response.logprobs),
        reply=response.text[:200],
    )
