"""The one async HTTP client every judge call goes through.

Per endpoint: bounded concurrency, a requests-per-minute limit, retries with exponential backoff and
jitter on 429/5xx/timeouts/connection errors/malformed bodies (honouring Retry-After), and the
response cache. A final failure raises ``EndpointCallError`` for the caller's sample only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import NoReturn

from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.http.providers import provider_of
from studio.core.models.endpoints import EndpointConfig
from studio.core.outside import decode_outside, loads_outside
from studio.core.scoring import DryRunRecorder, RunBudget

from .adapters import MalformedResponse
from .cache import ResponseCache, cache_key, request_body
from .chat import ChatRequest, ChatResponse
from .credentials import key_refused, redact_logs, remember_secret, scrub
from .errors import CredentialsRefused, EndpointCallError, JudgeError
from .limits import MAX_RETRY_AFTER, RateLimiter, backoff_delay, parse_retry_after
from .proxies import proxy_refused
from .redaction import redact_answer, redact_text, redact_value
from .rejections import body_excerpt, request_rejected
from .transport import (
    CONNECTION_ERRORS,
    TIMEOUT_ERRORS,
    BodyTooLarge,
    close_pools,
    describe,
    open_pools,
)

log = logging.getLogger("studio.judges")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
#: a request that timed out is sent unchanged once more at most: a server still generating the
#: first answer (a local model) is only slowed down further by more copies of the same request
MAX_TIMEOUT_RETRIES = 1


def worst_case_tokens(config: EndpointConfig, model: str, body: bytes) -> tuple[int, int]:
    """What a call whose answer reported no usage is charged under a spend cap: its prompt counted
    here (``judges/tokens.py``: the model's BPE, else 4 characters a token) and its answer at the
    request's ``max_tokens`` (every call carries one: ``adapters.answer_budget``). An upper bound for
    the answer, an estimate for the prompt: the tokens recorded for the call are these."""
    from studio.core.judges.tokens import counter_for

    payload = json.loads(body)
    messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
    system = payload.get("system")  # Anthropic's system prompt is beside the messages
    if system:
        messages = [{"role": "system", "content": system}, *messages]
    flat = [{"role": m.get("role"), "content": _text_of(m.get("content"))} for m in messages]
    completion = payload.get("max_tokens") or payload.get("max_completion_tokens") or 0
    return counter_for(model, provider_of(config).openai_encodings).count_messages(flat), int(completion)


def _text_of(content: JsonValue) -> str:
    """A message's text: a string, or the text of its content blocks."""
    if isinstance(content, list):
        return "".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


class JudgeClient:
    """Talks to one endpoint; created per run (per event loop) and closed with ``aclose``."""

    def __init__(
        self,
        config: EndpointConfig,
        *,
        api_key: str | None = None,
        cache: ResponseCache | None = None,
        use_cache: bool = True,
        model: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        budget: RunBudget | None = None,
        dry_run: DryRunRecorder | None = None,
        halt: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.model = model or config.model
        self.adapter = provider_of(config)
        if problem := self.adapter.model_problem(self.model):
            # a judge's model names the deployment: it is never allowed to change the URL's path
            raise JudgeError(f"endpoint {config.name}: {problem}")
        self.cache = cache
        self.read_cache = use_cache  # --no-cache: ask again, but keep the fresh answer
        self.max_retries = config.max_retries if max_retries is None else max_retries
        self.timeout = timeout or config.timeout
        self.cancel = cancel or threading.Event()
        #: the run's spend cap (engine/budget.py): ``admit()`` before a call, ``spend(...)`` after
        self.budget = budget
        #: ``run --dry-run``: answers what the cache cannot, without a network call (engine/dry_run.py)
        self.dry_run = dry_run
        #: a run's ``GradingContext.halt``: told once the endpoint refuses the key or a proxy its
        #: credentials (``CredentialsRefused``), so the run stops instead of failing every sample
        self.halt = halt
        self._api_key = api_key
        if api_key:
            remember_secret(api_key)
        redact_logs()
        self._limiter = (
            RateLimiter(config.requests_per_minute) if config.requests_per_minute else None
        )
        key = f"{config.name} {config.base_url} {config.proxy} {config.ca_bundle}"
        self._pool = open_pools(key, config.max_concurrency, min(self.timeout, 10.0),
                                tls=not config.base_url.lower().startswith("http://"),
                                proxy=config.proxy, ca_bundle=config.ca_bundle)
        self.calls = 0
        #: calls sent and not yet answered (the run's progress shows it)
        self.in_flight = 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        payload = self.adapter.payload(self.config, self.model, request)
        # the seed separates repeated samples in the cache even where the API has no seed field
        salt = "" if request.seed is None else f"seed={request.seed}"
        return await self._cached_call(self.adapter.path, payload, self.adapter.parse, salt)

    async def embeddings(self, inputs: list[str] | str, model: str | None = None) -> JsonObject:
        """OpenAI ``/embeddings``; the raw JSON body is returned."""
        payload = {"model": model or self.config.embedding_model or self.model, "input": inputs}
        response = await self._cached_call("embeddings", payload, _parse_embeddings,
                                           deployment=str(payload["model"]))
        body: JsonObject = response.raw  # _parse_embeddings passes an object only
        return body

    async def post(
        self, path: str, payload: JsonObject, check: Callable[[JsonValue], object]
    ) -> tuple[JsonValue, int]:
        """POST with the same retries and limits, no cache; ``check`` raises MalformedResponse."""

        def parse(body: JsonValue) -> ChatResponse:
            check(body)
            return ChatResponse(text="", raw=body)

        raw, _, attempts, _ = await self._post(path, request_body(payload), parse)
        return raw, attempts

    async def get(self, path: str) -> JsonValue:
        """One GET (no retries): used for /info and /v1/models probes."""
        async with asyncio.timeout(self.timeout), self._pool.slot() as transport:
            reply = await self._pool.send(
                transport, "GET", self.config.url_for(path, self.model),
                self.adapter.headers(self._api_key)
            )
        if 300 <= reply.status < 400:
            raise redirected(self.config.name, f"GET /{path}", reply.status, reply.headers, 1)
        self._check_credentials(reply.status, reply.text, self.config.url_for(path, self.model))
        if reply.status >= 400:
            raise EndpointCallError(
                f"HTTP {reply.status} from {self.config.name} for GET /{path}: "
                f"{body_excerpt(reply.text)}",
                status=reply.status,
            )
        return redact_value(loads_outside(reply.content))

    async def _cached_call(
        self,
        path: str,
        payload: JsonObject,
        parse: Callable[[JsonValue], ChatResponse],
        salt: str = "",
        deployment: str | None = None,
    ) -> ChatResponse:
        """``deployment``: the Azure deployment the call goes to (else the client's model)."""
        body = request_body(payload)
        # the server is part of the key: two servers that both call their model "default" differ
        key = cache_key(self.config.kind, self.config.url_for(path, deployment or self.model) + salt,
                        body)
        if self.cache is not None and self.read_cache:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    response = parse(hit)
                except MalformedResponse:
                    pass
                else:
                    if self.dry_run is not None:
                        self.dry_run.hit(self.config)
                    # tokens were spent by the earlier call; a cached answer costs nothing now
                    return response.model_copy(
                        update={
                            "cached": True,
                            "attempts": 0,
                            "prompt_tokens": 0,
                            "completion_tokens": 0,
                            "cached_tokens": 0,
                        }
                    )
        if self.dry_run is not None:
            return parse(self.dry_run.answer(self, path, payload))
        raw, response, attempts, text = await self._post(path, body, parse, deployment)
        if self.cache is not None:
            self.cache.put(key, raw, text)
        return response

    async def _post(
        self, path: str, body: bytes, parse: Callable[[JsonValue], ChatResponse],
        deployment: str | None = None,
    ) -> tuple[JsonValue, ChatResponse, int, str]:
        """(parsed body, response, attempts made, body text) of the first good answer.

        The response's ``latency_ms`` is the good attempt's own time on the wire; ``queue_ms`` is
        the time spent waiting for a connection slot and the rate limit, over every attempt.
        """
        url = self.config.url_for(path, deployment or self.model)
        headers = {"Content-Type": "application/json", **self.adapter.headers(self._api_key)}
        problem = "no attempt made"
        queued = 0.0
        timeouts = 0
        last_status: int | None = None
        for attempt in range(self.max_retries + 1):
            if self.cancel.is_set():
                raise EndpointCallError("cancelled", attempts=attempt)
            retry_after: float | None = None
            waiting = time.perf_counter()
            async with self._pool.slot() as transport:
                if self._limiter is not None:
                    await self._limiter.acquire()
                if self.cancel.is_set():  # cancelled (or the run halted) while this call waited for a slot
                    raise EndpointCallError("cancelled", attempts=attempt)
                if self.budget is not None and not self.budget.admit():
                    # the run reached its spend cap: no further call goes out (holding a slot, so a
                    # call merely queued for one was never admitted)
                    raise EndpointCallError("cancelled", attempts=attempt)
                sent = time.perf_counter()
                queued += sent - waiting
                self.calls += 1
                self.in_flight += 1
                try:
                    async with asyncio.timeout(self.timeout):  # one timer, not one per socket op
                        reply = await self._pool.send(transport, "POST", url, headers, body)
                except TIMEOUT_ERRORS:
                    timeouts += 1
                    problem = f"timed out after {self.timeout:g} s"
                except BodyTooLarge as exc:
                    problem = str(exc)
                except CredentialsRefused as exc:  # a proxy's 407 to a CONNECT: asking again cannot help
                    self._refused(exc, attempt + 1)
                except CONNECTION_ERRORS as exc:
                    # a sentence (refused, unknown host, untrusted certificate, the proxy's answer)
                    said = exc if isinstance(exc, JudgeError) else describe(exc, url)
                    problem = scrub(redact_text(str(said))) or exc.__class__.__name__
                else:
                    status = last_status = reply.status
                    if 300 <= status < 400:
                        raise redirected(self.config.name, "POST", status, reply.headers, attempt + 1)
                    self._check_credentials(status, reply.text, url, attempt + 1)
                    if status >= 400 and (
                        request_rejected(status, reply.text)
                        or status not in RETRYABLE_STATUS and status < 500
                    ):
                        raise EndpointCallError(
                            f"HTTP {status} from {self.config.name}: {body_excerpt(reply.text)}",
                            attempts=attempt + 1,
                            status=status,
                            rejected=True,
                        )
                    if status >= 400:
                        problem = f"HTTP {status}: {body_excerpt(reply.text)}"
                        header = reply.headers.get("retry-after")
                        retry_after = parse_retry_after(header)
                        if header and retry_after is None:
                            problem += (
                                f" (asked to wait {header.strip()[:40]} s, past our cap of "
                                f"{MAX_RETRY_AFTER:g} s)"
                            )
                    else:
                        try:
                            text = reply.text
                            answer, text = decode_outside(text)  # the one boundary of an answer
                            answer, text = redact_answer(answer, text)
                            response = parse(answer).model_copy(
                                update={
                                    "attempts": attempt + 1,
                                    "latency_ms": (time.perf_counter() - sent) * 1000,
                                    "queue_ms": queued * 1000,
                                }
                            )
                            if self.budget is not None:
                                if not response.usage_reported:  # the cap still holds: charged at its worst
                                    prompt, completion = worst_case_tokens(self.config, self.model, body)
                                    response = response.model_copy(update={
                                        "prompt_tokens": prompt, "completion_tokens": completion,
                                        "cached_tokens": 0})
                                self.budget.spend(self.config, response.prompt_tokens,
                                                  response.completion_tokens, response.cached_tokens)
                            return answer, response, attempt + 1, text
                        except (ValueError, MalformedResponse) as exc:
                            problem = f"malformed response ({scrub(redact_text(str(exc)))[:200]})"
                finally:
                    self.in_flight -= 1
            if attempt >= self.max_retries:
                break
            if timeouts > MAX_TIMEOUT_RETRIES:
                problem += (
                    "; not sent again: the server may still be working on it "
                    "(lower max_tokens or raise the endpoint's timeout)"
                )
                break
            delay = (
                retry_after
                if retry_after is not None
                else backoff_delay(attempt, self.config.retry_backoff)
            )
            log.info("%s: %s; retry %d in %.2f s", self.config.name, problem, attempt + 1, delay)
            await self._sleep(delay)
        attempts = attempt + 1
        raise EndpointCallError(
            f"{self.config.name}: {problem} (gave up after {attempts} attempt{'s' if attempts > 1 else ''})",
            attempts=attempts,
            status=last_status,
        )

    def _check_credentials(self, status: int, text: str, url: str, attempts: int = 1) -> None:
        """Where an answer is read: a 401/403 is the endpoint refusing the key, a 407 (to a
        plain-http request through a proxy) the proxy refusing its credentials."""
        if status in (401, 403):
            said = key_refused(self.config, status, body_excerpt(text))
        elif status == 407:
            proxy = self._pool.route(url)[0]
            if proxy is None:  # a server answering 407 itself: still a refusal of the credentials
                said = f"{self.config.name} answered HTTP 407 (proxy credentials wanted): {body_excerpt(text)}"
            else:
                said = proxy_refused(proxy, status, body_excerpt(text))
        else:
            return
        self._refused(CredentialsRefused(said, status=status, attempts=attempts), attempts)

    def _refused(self, exc: CredentialsRefused, attempts: int) -> NoReturn:
        """Stop the run (when there is one to stop) and fail this call with the refusal."""
        exc.attempts = attempts
        if self.halt is not None:
            self.halt(str(exc))
        raise exc

    async def _sleep(self, seconds: float) -> None:
        """Sleep in short slices so a cancel stops the wait promptly."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.cancel.is_set():
                return
            await asyncio.sleep(min(left, 0.1))

    def flush(self) -> None:
        if self.cache is not None:
            self.cache.flush()

    async def aclose(self) -> None:
        if self.cache is not None:
            self.cache.close()
        await close_pools(self._pool)


def redirected(name: str, what: str, status: int, headers: Mapping[str, str], attempts: int) -> EndpointCallError:
    """A 30x is not a malformed answer: say where it points and that redirects are not followed
    (following one would send the prompt, and the API key, to a place the user never named)."""
    location = str(headers.get("location") or "").strip()
    where = f"to {scrub(location)[:200]}" if location else "without a Location"
    return EndpointCallError(
        f"{name} answered {what} with HTTP {status}, a redirect {where}: the studio does not follow "
        "redirects (if that address is the endpoint, set the endpoint's URL to it)",
        attempts=attempts, status=status)


def _parse_embeddings(body: JsonValue) -> ChatResponse:
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise MalformedResponse("no data[] in the embeddings response")
    usage = body.get("usage") or {}
    return ChatResponse(text="", prompt_tokens=int(usage.get("prompt_tokens") or 0), raw=body)
