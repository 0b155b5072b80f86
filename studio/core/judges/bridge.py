"""The model bridge for MKA1 ``model_backed`` graders: ``ctx.responses_create`` / ``ctx.embeddings_create``.

The sandbox worker calls the bridge synchronously from its own thread; the bridge runs the shared
async client on a private event loop thread, so calls get the same limits, retries and cache as
judges. Requests follow the Responses API shape (``input`` text or messages, ``instructions``,
``temperature``, ``max_output_tokens``, ``text.format`` with a JSON schema, ``top_logprobs`` with
``include: ["message.output_text.logprobs"]``); ``model`` "auto" means the endpoint's. A judge
exported to MKA1 asks through this shape, so the studio runs the exported grader as MKA1 would.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from studio.core.json_types import JsonObject
from studio.core.judges.http.cache import ResponseCache
from studio.core.judges.http.chat import ChatMessage, ChatRequest, ChatResponse
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.credentials import resolve_api_key
from studio.core.judges.http.errors import JudgeError
from studio.core.store.endpoints import EndpointRepository

if TYPE_CHECKING:
    from studio.core.store.library import Library

#: ``ctx.responses_create`` / ``ctx.embeddings_create``; the short names are accepted too
BRIDGE_METHODS = ("responses_create", "embeddings_create")


class ModelBridge:
    """Callable ``bridge(method, kwargs) -> dict``; ``close()`` when the run ends."""

    def __init__(self, client: JudgeClient, call_timeout: float | None = None) -> None:
        self.client = client
        self.call_timeout = call_timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="model-bridge", daemon=True
        )
        self._thread.start()
        # a caller that forgets close() must not leak the thread, loop and connections
        self._finalizer = weakref.finalize(self, _shutdown, self._loop, self._thread, client)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __call__(self, method: str, kwargs: JsonObject) -> JsonObject:
        if self.closed:
            raise JudgeError("the model bridge is closed")
        if method in ("responses_create", "responses"):
            coro = self._responses(kwargs)
        elif method in ("embeddings_create", "embeddings"):
            coro = self._embeddings(kwargs)
        else:
            raise JudgeError(
                f"unknown bridge method {method!r}; expected one of {', '.join(BRIDGE_METHODS)}"
            )
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(timeout=self.call_timeout)

    async def _responses(self, kwargs: JsonObject) -> JsonObject:
        request = responses_to_chat(kwargs)
        response = await self.client.chat(request)
        model = kwargs.get("model")
        return {
            "id": f"resp_{uuid.uuid4().hex[:24]}",
            "object": "response",
            "status": "completed",
            "model": self.client.model if model in (None, "", "auto") else model,
            "output_text": response.text,
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": response.text, "annotations": [],
                                 **_logprobs_json(response, request)}],
                }
            ],
            "usage": {
                "input_tokens": response.prompt_tokens,
                "output_tokens": response.completion_tokens,
                "total_tokens": response.prompt_tokens + response.completion_tokens,
            },
            "metadata": kwargs.get("metadata") or {},
            "cached": response.cached,
        }

    async def _embeddings(self, kwargs: JsonObject) -> JsonObject:
        model = kwargs.get("model")
        inputs = kwargs.get("input", "")
        return await self.client.embeddings(inputs, None if model in (None, "", "auto") else model)

    def close(self) -> None:
        self._finalizer()


def _shutdown(
    loop: asyncio.AbstractEventLoop, thread: threading.Thread, client: JudgeClient
) -> None:
    """Close the client on its own loop, then stop the loop and its thread."""
    if loop.is_closed():
        return
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    if thread is not threading.current_thread():
        thread.join(timeout=5)
    if not thread.is_alive():
        loop.close()


def _logprobs_json(response: ChatResponse, request: ChatRequest) -> JsonObject:
    """The Responses API's ``logprobs`` of an output text, when they were asked for and given."""
    if not request.logprobs or response.logprobs is None:
        return {}
    return {"logprobs": [
        {"token": t.token, "logprob": t.logprob,
         "top_logprobs": [{"token": alt, "logprob": lp} for alt, lp in t.top.items()]}
        for t in response.logprobs
    ]}


def responses_to_chat(kwargs: JsonObject) -> ChatRequest:
    """Map a Responses API request onto our chat request."""
    messages: list[ChatMessage] = []
    if kwargs.get("instructions"):
        messages.append(ChatMessage(role="system", content=str(kwargs["instructions"])))
    raw_input = kwargs.get("input", "")
    if isinstance(raw_input, str):
        messages.append(ChatMessage(role="user", content=raw_input))
    else:
        for item in raw_input or []:
            role = item.get("role", "user")
            role = "system" if role == "developer" else role
            if role not in ("system", "user", "assistant"):
                role = "user"
            content = item.get("content", "")
            if isinstance(content, list):  # [{"type": "input_text", "text": ...}]
                content = "".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            messages.append(ChatMessage(role=role, content=str(content)))
    text_format = (kwargs.get("text") or {}).get("format") or {}
    schema = text_format.get("schema") if text_format.get("type") == "json_schema" else None
    top = kwargs.get("top_logprobs")
    asked = kwargs.get("include")
    include = asked if isinstance(asked, (list, tuple)) else ()
    logprobs = "message.output_text.logprobs" in include or (isinstance(top, int) and top > 0)
    return ChatRequest(
        messages=messages,
        temperature=kwargs.get("temperature"),
        max_tokens=kwargs.get("max_output_tokens"),
        json_mode=text_format.get("type") in ("json_object", "json_schema"),
        json_schema=schema if isinstance(schema, dict) else None,
        logprobs=logprobs,
        top_logprobs=min(top, 20) if logprobs and isinstance(top, int) and top > 0 else None,
    )


def make_model_bridge(
    library: Library | Engine, endpoint_name: str | None, *, use_cache: bool = True
) -> Callable[[str, JsonObject], JsonObject]:
    """A synchronous, thread-safe bridge to ``endpoint_name`` (None: the library's only endpoint)."""
    repository = EndpointRepository.of(library)
    config = repository.resolve(endpoint_name)
    engine = library if isinstance(library, Engine) else library.engine
    client = JudgeClient(
        config,
        api_key=resolve_api_key(config),
        cache=ResponseCache(engine, flush_every=1),
        use_cache=use_cache,
    )
    return ModelBridge(client, call_timeout=config.timeout * (config.max_retries + 2))
