"""HTTP plumbing under the judge client: httpcore (httpx's engine) pools on plain asyncio sockets.

Why not one ``httpx.AsyncClient``: for every request it places, httpcore's pool scans each pooled
connection (a select() per idle one), and the client layer adds cookie, auth and redirect handling
a JSON API never needs; with 32 calls in flight that costs more CPU than the calls themselves. So
requests go through several small pools ("shards"), each never given more requests than it has
connections, over an asyncio network backend (anyio's per-operation cancel scopes cost another
fifth). Deadlines are one ``asyncio.timeout`` per request, set by the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import math
import select
import socket
import ssl
import sys
import weakref
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

CONNECTIONS_PER_SHARD = 4
#: the most of one answer kept in memory; past it the answer is dropped and the call retried
MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class BodyTooLarge(Exception):
    """The server sent (or announced) more than ``MAX_RESPONSE_BYTES``: a retryable failure."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body larger than {limit // (1024 * 1024)} MiB (the cap)")
        self.limit = limit

#: what a transport failure looks like, whichever layer raised it
TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (TimeoutError, httpcore.TimeoutException)
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    OSError,
)


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One TLS context for every pool: building one reads the CA bundle (~25 ms)."""
    return httpx.create_ssl_context()


def _skip_missing_sniffio() -> None:
    """httpcore tries ``import sniffio`` on every request; when it is not installed each failed
    import walks sys.path. A None entry in sys.modules makes that failure instant."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


_skip_missing_sniffio()


def _readable(sock: Any) -> bool:
    """True when a socket has data or EOF waiting (or is unusable): an idle connection is stale."""
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


#: request bytes held back before a send: a request's head and a body up to this size leave in one
#: send() (httpcore writes them separately; two syscalls and two drains a call were measurable)
COALESCE_BYTES = 256 * 1024


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._pending: list[bytes] = []
        self._pending_size = 0

    async def _flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        self._pending_size = 0
        try:
            self._writer.write(data)
            await self._writer.drain()
        except OSError as exc:
            raise httpcore.WriteError(exc) from exc

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush()  # the request is whole once the answer is awaited
        try:
            return await self._reader.read(max_bytes)
        except OSError as exc:
            raise httpcore.ReadError(exc) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._pending.append(buffer)
        self._pending_size += len(buffer)
        if self._pending_size >= COALESCE_BYTES:
            await self._flush()

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> _Stream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(exc) from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpcore.ConnectError(exc) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle pooled connection the server has closed
            sock = self._writer.get_extra_info("socket")
            return self._reader.at_eof() or (sock is not None and _readable(sock))
        names = {
            "ssl_object": "ssl_object",
            "socket": "socket",
            "client_addr": "sockname",
            "server_addr": "peername",
        }
        return self._writer.get_extra_info(names[info]) if info in names else None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.ConnectError(exc) from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return _Stream(reader, writer)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not supported for judge endpoints")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class ShardedPools:
    """At most ``concurrency`` requests in flight, spread over pools of a few connections each."""

    def __init__(self, concurrency: int, connect_timeout: float, tls: bool = True) -> None:
        count = max(1, math.ceil(concurrency / CONNECTIONS_PER_SHARD))
        per_shard = math.ceil(concurrency / count)
        # a plain-http endpoint (a local server, the scripted judge) never needs the TLS context,
        # whose first build reads the CA bundle inside the run's loop, before the first call
        self.shards = [
            httpcore.AsyncConnectionPool(
                ssl_context=ssl_context() if tls else None,
                max_connections=per_shard,
                max_keepalive_connections=per_shard,
                network_backend=AsyncioBackend(),
            )
            for _ in range(count)
        ]
        self._extensions = {"timeout": {"connect": connect_timeout}}
        self._slots: asyncio.Queue[int] = asyncio.Queue()
        for n in range(concurrency):
            self._slots.put_nowait(n % count)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[httpcore.AsyncConnectionPool]:
        shard = await self._slots.get()
        try:
            yield self.shards[shard]
        finally:
            self._slots.put_nowait(shard)

    async def send(
        self,
        pool: httpcore.AsyncConnectionPool,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes = b"",
        max_body: int = MAX_RESPONSE_BYTES,
    ) -> Reply:
        """One request; the body is read in chunks and never more than ``max_body`` of it."""
        async with pool.stream(
            method, url, headers=list(headers.items()), content=body, extensions=self._extensions
        ) as response:
            names = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
            declared = names.get("content-length", "")
            if declared.isdigit() and int(declared) > max_body:
                raise BodyTooLarge(max_body)
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_stream():
                size += len(chunk)
                if size > max_body:
                    raise BodyTooLarge(max_body)  # leaving the block closes the connection
                chunks.append(chunk)
        return Reply(response.status, names, b"".join(chunks))

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()


class _Shared:
    def __init__(self, pools: ShardedPools) -> None:
        self.pools = pools
        self.users = 0


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Shared]] = (
    weakref.WeakKeyDictionary()
)


def open_pools(key: str, concurrency: int, connect_timeout: float, tls: bool = True) -> ShardedPools:
    """The pools of endpoint ``key`` on the running loop, shared by every client of that endpoint
    (two judges of one composite grader, or of one suite, share one concurrency limit: the first
    client's, as every client of one run resolves the same endpoint and run concurrency). Outside
    a running loop each caller gets its own. Pair with ``close_pools``. ``tls`` false: the
    endpoint is plain http (no TLS context is built)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return ShardedPools(concurrency, connect_timeout, tls)
    shared = _SHARED.setdefault(loop, {})
    entry = shared.get(key)
    if entry is None:
        entry = shared[key] = _Shared(ShardedPools(concurrency, connect_timeout, tls))
    entry.users += 1
    return entry.pools


async def close_pools(pools: ShardedPools) -> None:
    """Release one user of ``pools``; the last one closes the connections."""
    shared = _SHARED.get(asyncio.get_running_loop(), {})
    for key, entry in list(shared.items()):
        if entry.pools is pools:
            entry.users -= 1
            if entry.users > 0:
                return
            del shared[key]
            break
    await pools.aclose()
