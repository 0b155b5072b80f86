"""The HTTP side of our scripted servers: HTTP/1.1 keep-alive on asyncio, in its own thread.

A thread per connection (the stdlib ``http.server``) spends a benchmark's time fighting over the
GIL, so connections are asyncio tasks on one loop. Faults (429 + Retry-After, 500, slow answers,
malformed JSON, dropped connections) are acted out here, chosen by markers in the request body
(see ``fake_script``) or queued with ``inject``. Subclasses answer requests in ``route``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Self

from studio.core.demo.fake_script import find_fault
from studio.core.json_types import JsonValue

SLOW_SECONDS = 5.0
MAX_BODY = 32 * 1024 * 1024
ENDLESS_BYTES = 2 * 1024**3


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    endless: bool = False  # announce 2 GiB and keep sending until the client hangs up


def json_reply(status: int, body: JsonValue, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(body).encode("utf-8"), headers or {})


class FakeServerBase:
    """HTTP/1.1 keep-alive server with fault injection; subclasses implement ``route``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, latency_ms: float = 0.0) -> None:
        self.host, self.port = host, port
        self.latency = latency_ms / 1000.0
        self.requests: Counter[str] = Counter()
        #: requests being answered right now, and the most there ever were (tests of concurrency)
        self.in_flight = 0
        self.max_in_flight = 0
        self.last_authorization: str | None = None
        #: the key every request must carry (``Authorization: Bearer KEY`` or ``x-api-key: KEY``),
        #: else it is answered 401 as OpenAI does; None: any request is served
        self.required_key: str | None = None
        self._fault_counts: Counter[str] = Counter()
        self._injected: list[tuple[str, float | None]] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[asyncio.Task[None]] = set()

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> Self:
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._connection, self.host, self.port, backlog=512)
                )
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # e.g. the port is taken: report it to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name=type(self).__name__, daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            self._thread.join(5)
            self._thread = None
            raise failure[0]
        return self

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        """Foreground mode for the CLI: block until interrupted."""
        if self._thread is None:
            self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(0.5)
        finally:
            self.stop()

    # --- HTTP -----------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line.strip():
                    break
                method, target, _ = request_line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                if length > MAX_BODY:
                    break
                raw = await reader.readexactly(length) if length else b""
                reply = await self.dispatch(
                    method, target, headers, raw if method == "POST" else None
                )
                if reply.drop:
                    writer.transport.abort()
                    return
                if reply.endless:
                    await self._endless(writer)
                    return
                phrase = HTTPStatus(reply.status).phrase
                head = [
                    f"HTTP/1.1 {reply.status} {phrase}",
                    "Content-Type: application/json",
                    f"Content-Length: {len(reply.body)}",
                ]
                head += [f"{k}: {v}" for k, v in reply.headers.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + reply.body)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            # stop() cancels open connections; finishing quietly (not re-raising) avoids
            # asyncio's "exception in callback" noise on Python 3.11 when the server shuts down
            writer.transport.abort()
        finally:
            self._connections.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _endless(self, writer: asyncio.StreamWriter) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {ENDLESS_BYTES}\r\n\r\n"
        writer.write(head.encode("latin-1") + b'{"choices": [{"message": {"content": "')
        chunk = b"x" * (1024 * 1024)
        for _ in range(ENDLESS_BYTES // len(chunk)):
            writer.write(chunk)
            await writer.drain()  # raises once the client has closed the connection

    # --- faults ---------------------------------------------------------------------------------
    def inject(self, kind: str, times: int = 1, delay: float | None = None) -> None:
        """Fail the next ``times`` POST requests with ``kind`` (429, 500, slow, malformed, drop)."""
        with self._lock:
            self._injected.extend([(kind, delay)] * times)

    def _fault_for(self, raw: bytes, text: str) -> tuple[str, float | None] | None:
        with self._lock:
            if self._injected:
                return self._injected.pop(0)
        found = find_fault(text)
        if found is None:
            return None
        kind, times, delay = found
        key = hashlib.sha256(raw).hexdigest()
        with self._lock:
            self._fault_counts[key] += 1
            count = self._fault_counts[key]
        return (kind, delay) if times is None or count <= times else None

    async def _fault_reply(self, kind: str, delay: float | None) -> Reply | None:
        """The reply a fault calls for; None when the request then proceeds (a slow answer)."""
        if kind == "429":
            wait = 1.0 if delay is None else delay
            error = {"error": {"message": "rate limited (scripted)", "type": "rate_limit"}}
            return json_reply(429, error, {"Retry-After": f"{wait:g}"})
        if kind == "500":
            return json_reply(500, {"error": {"message": "server error (scripted)"}})
        if kind == "malformed":
            return Reply(200, b'{"choices": [ {"message": oops')
        if kind == "drop":
            return Reply(drop=True)
        if kind == "endless":
            return Reply(endless=True)
        if kind == "slow":
            await asyncio.sleep(SLOW_SECONDS if delay is None else delay)
        return None

    # --- dispatch -------------------------------------------------------------------------------
    async def dispatch(
        self, method: str, target: str, headers: dict[str, str], raw: bytes | None
    ) -> Reply:
        path = target.split("?", 1)[0].rstrip("/")
        with self._lock:
            self.requests[path] += 1
            self.last_authorization = headers.get("authorization") or headers.get("x-api-key")
        if self.required_key is not None and self.last_authorization not in (
                self.required_key, f"Bearer {self.required_key}"):
            return json_reply(401, {"error": {"message": "Incorrect API key provided.",
                                              "type": "invalid_request_error", "code": "invalid_api_key"}})
        body: JsonValue = None
        if raw is not None:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return json_reply(400, {"error": {"message": "request body is not JSON"}})
            fault = self._fault_for(raw, raw.decode("utf-8", "replace"))
            if fault is not None:
                reply = await self._fault_reply(*fault)
                if reply is not None:
                    return reply
        self.in_flight += 1  # one event loop serves every connection: no lock needed
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            result = self.route(method, path, body)
        finally:
            self.in_flight -= 1
        if result is None:
            return json_reply(404, {"error": {"message": f"no route {method} {path}"}})
        return json_reply(200, result)

    def route(self, method: str, path: str, body: JsonValue) -> JsonValue:
        raise NotImplementedError
