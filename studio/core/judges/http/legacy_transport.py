"""HTTP plumbing under the judge client: a lean HTTP/1.1 keep-alive client on asyncio streams.

Why not httpx/httpcore on this path: a judge call is one small JSON request and one small JSON
answer, and httpcore's per-request pool bookkeeping, h11's state machine and anyio's lock
checkpoints cost half of a call's CPU (bench/README.md, section 1). This module does what the call
needs and no more: one request out, one answer back (Content-Length, chunked, or until the server
closes), the connection kept for the next call. httpx stays the project's HTTP library everywhere
else (local server probes) and provides the TLS context (certifi's CA bundle) used here.

What a server can send is bounded, because the host trusts no byte it reads: the status line and
each header line (``MAX_LINE_BYTES``), the head as a whole (``MAX_HEAD_BYTES``, ``MAX_HEADERS``), the
body (``MAX_RESPONSE_BYTES``: ``BodyTooLarge``), and time (the caller's one ``asyncio.timeout`` per
request; ``connect_timeout`` for opening a connection). A head that is not HTTP/1.x is an
``HTTPProtocolError`` (a ``JudgeError``) naming what was wrong. Redirects are returned, never
followed. A request cancelled or failed mid-way closes its connection; only a connection whose
answer was read whole goes back to the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import ssl
import weakref
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx

from .errors import JudgeError

#: the most of one answer kept in memory; past it the answer is dropped and the call retried
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
#: the longest status line, header line or chunk-size line read from a server
MAX_LINE_BYTES = 16 * 1024
#: the response head (status line and headers, or a chunked body's trailers) as a whole
MAX_HEAD_BYTES = 64 * 1024
MAX_HEADERS = 100
#: interim (1xx) answers skipped before the real one; more is a server playing games
MAX_INTERIM = 8
#: a request's head and a body up to this size leave in one send()
COALESCE_BYTES = 256 * 1024
_READ_BYTES = 64 * 1024


class BodyTooLarge(Exception):
    """The server sent (or announced) more than ``MAX_RESPONSE_BYTES``: a retryable failure."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body larger than {limit // (1024 * 1024)} MiB (the cap)")
        self.limit = limit


class HTTPProtocolError(JudgeError):
    """The server's answer is not HTTP/1.x as the studio reads it (a malformed status line, an
    oversized or malformed head, broken chunked framing), or a request header cannot be sent."""


class RemoteClosed(ConnectionError):
    """The server closed the connection before its answer was whole."""


class _NotSent(ConnectionError):
    """Writing the request failed: the server had already dropped the connection."""


#: what a transport failure looks like, whichever layer raised it
TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (TimeoutError,)
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (HTTPProtocolError, OSError)


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One TLS context for every pool: building one reads the CA bundle (~25 ms). httpx's (certifi,
    or the system store when SSL_CERT_FILE/SSL_CERT_DIR say so), offering HTTP/1.1 only."""
    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


@dataclass(slots=True)
class Reply:
    status: int
    headers: dict[str, str]
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class _Origin:
    scheme: str
    host: str
    port: int
    host_header: str


_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: [^\r\n]*)?\r?\n")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_NO_BODY_METHODS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


@functools.lru_cache(maxsize=256)
def _split(url: str) -> tuple[_Origin, str]:
    """(origin, request target) of an absolute http(s) URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise HTTPProtocolError(f"not an http(s) URL: {url[:200]!r}")
    default = 443 if scheme == "https" else 80
    port = parts.port or default
    host = parts.hostname
    shown = f"[{host}]" if ":" in host else host
    host_header = shown if port == default else f"{shown}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return _Origin(scheme, host, port, host_header), target


def _request_head(method: str, origin: _Origin, target: str, headers: dict[str, str]) -> bytes:
    """The request line and headers, without Content-Length and the blank line; refuses what
    would let a header value start a header or a request of its own."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {origin.host_header}"]
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name) or any(ch in value for ch in "\r\n\0"):
            # the value may be a key: name the header, never print the value
            raise HTTPProtocolError(
                f"request header {name[:40]!r} holds a line break or is not a valid name; not sent"
            )
        if name.lower() != "host":
            lines.append(f"{name}: {value}")
    try:
        return ("\r\n".join(lines) + "\r\n").encode("ascii")
    except UnicodeEncodeError as exc:
        raise HTTPProtocolError(
            "a request header or the URL holds a non-ASCII character; not sent"
        ) from exc


class _Reader(asyncio.StreamReader):
    """Counts the bytes the socket delivered, so a pooled connection that received anything while
    idle (an unsolicited 408, stray bytes) is known stale without peeking at the buffer."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.received = 0

    def feed_data(self, data: bytes) -> None:
        self.received += len(data)
        super().feed_data(data)


class _Connection:
    """One HTTP/1.1 connection: sends a request, reads its answer with every bound applied."""

    __slots__ = ("reader", "writer", "consumed", "keep_alive")

    def __init__(self, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.consumed = 0
        self.keep_alive = True

    def reusable(self) -> bool:
        """Open, and nothing arrived since its last answer was read (EOF included)."""
        return (
            not self.writer.transport.is_closing()
            and not self.reader.at_eof()
            and self.reader.received == self.consumed
        )

    def abort(self) -> None:
        self.writer.transport.abort()

    async def aclose(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()

    async def write(self, head: bytes, body: bytes) -> None:
        writer = self.writer
        try:
            if len(body) <= COALESCE_BYTES:
                writer.write(head + body)
            else:
                writer.write(head)
                writer.write(body)
            await writer.drain()
        except OSError as exc:
            raise _NotSent(str(exc) or exc.__class__.__name__) from exc

    async def _line(self, what: str) -> bytes:
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            raise HTTPProtocolError(
                f"the server sent a {what} longer than {MAX_LINE_BYTES // 1024} KiB"
            ) from exc
        except asyncio.IncompleteReadError as exc:
            if not exc.partial and what == "status line":
                raise RemoteClosed("the server closed the connection without answering") from exc
            raise RemoteClosed(f"the server closed the connection in the middle of a {what}") from exc
        self.consumed += len(line)
        return line

    async def _exactly(self, count: int) -> bytes:
        try:
            data = await self.reader.readexactly(count)
        except asyncio.IncompleteReadError as exc:
            raise RemoteClosed(
                "the server closed the connection in the middle of the body "
                f"({len(exc.partial)} of {count} bytes)"
            ) from exc
        self.consumed += count
        return data

    async def _fields(self, what: str) -> dict[str, str]:
        """Header (or trailer) lines up to the blank line, names lower-cased; the last of repeated
        names wins, except Content-Length, which must agree."""
        fields: dict[str, str] = {}
        size = count = 0
        last = ""
        while True:
            line = await self._line(f"{what} line")
            size += len(line)
            if size > MAX_HEAD_BYTES:
                raise HTTPProtocolError(
                    f"the server's {what}s are larger than {MAX_HEAD_BYTES // 1024} KiB"
                )
            line = line.rstrip(b"\r\n")
            if not line:
                return fields
            count += 1
            if count > MAX_HEADERS:
                raise HTTPProtocolError(f"the server sent more than {MAX_HEADERS} {what}s")
            text = line.decode("latin-1")
            if text[0] in " \t":  # obsolete line folding: the value goes on
                if not last:
                    raise HTTPProtocolError(f"the server's first {what} line is a continuation")
                fields[last] += " " + text.strip(" \t")
                continue
            name, sep, value = text.partition(":")
            if not sep or not _TOKEN.fullmatch(name):
                raise HTTPProtocolError(f"malformed {what} line from the server: {text[:80]!r}")
            last = name.lower()
            value = value.strip(" \t")
            if last == "content-length" and fields.get(last, value) != value:
                raise HTTPProtocolError("the server sent two different Content-Length headers")
            fields[last] = value

    async def read_reply(self, method: str, max_body: int) -> Reply:
        for _ in range(MAX_INTERIM + 1):
            line = await self._line("status line")
            match = _STATUS.fullmatch(line)
            if match is None:
                raise HTTPProtocolError(
                    f"the server's status line is not HTTP/1.x: {line[:80].decode('latin-1')!r}"
                )
            status = int(match.group(2))
            headers = await self._fields("header")
            if not 100 <= status < 200 or status == 101:
                break
        else:
            raise HTTPProtocolError(f"the server sent more than {MAX_INTERIM} interim (1xx) answers")
        tokens = headers.get("connection", "").lower()
        if match.group(1) == b"1":
            self.keep_alive = "close" not in tokens
        else:
            self.keep_alive = "keep-alive" in tokens
        if method == "HEAD" or status in (101, 204, 304) or status < 200:
            self.keep_alive = self.keep_alive and status != 101
            return Reply(status, headers, b"")
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.rsplit(",", 1)[-1].strip().lower() == "chunked":
                body = await self._chunked(max_body)
            else:
                body = await self._until_close(max_body)
        elif "content-length" in headers:
            declared = headers["content-length"]
            if not declared.isdigit() or len(declared) > 19:
                raise HTTPProtocolError(f"the server's Content-Length is not a number: {declared[:40]!r}")
            length = int(declared)
            if length > max_body:
                raise BodyTooLarge(max_body)
            body = await self._exactly(length) if length else b""
        else:
            body = await self._until_close(max_body)
        return Reply(status, headers, body)

    async def _chunked(self, max_body: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            line = await self._line("chunk size line")
            field = line.split(b";", 1)[0].strip()
            if not _HEX.fullmatch(field):
                raise HTTPProtocolError(f"malformed chunk size from the server: {line[:40]!r}")
            length = int(field, 16)
            if length == 0:
                await self._fields("trailer")
                return b"".join(chunks)
            size += length
            if size > max_body:
                raise BodyTooLarge(max_body)
            data = await self._exactly(length + 2)
            if not data.endswith(b"\r\n"):
                raise HTTPProtocolError("a chunk of the server's answer is longer than announced")
            chunks.append(data[:-2])

    async def _until_close(self, max_body: int) -> bytes:
        """A body framed by the end of the connection, which is then not reused."""
        self.keep_alive = False
        chunks: list[bytes] = []
        size = 0
        while data := await self.reader.read(_READ_BYTES):
            size += len(data)
            if size > max_body:
                raise BodyTooLarge(max_body)
            chunks.append(data)
        return b"".join(chunks)


class _Slot:
    """``async with pool.slot()``: one of the endpoint's ``concurrency`` places for a request."""

    __slots__ = ("pool",)

    def __init__(self, pool: EndpointPool) -> None:
        self.pool = pool

    async def __aenter__(self) -> EndpointPool:
        await self.pool._free.acquire()
        return self.pool

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.pool._free.release()


class EndpointPool:
    """At most ``concurrency`` requests in flight to one endpoint, over keep-alive connections
    (never more connections than that; idle ones wait for the next call, newest first)."""

    def __init__(self, concurrency: int, connect_timeout: float, tls: bool = True) -> None:
        self.concurrency = max(1, concurrency)
        self.connect_timeout = connect_timeout
        # a plain-http endpoint (a local server, the scripted judge) never builds the TLS context,
        # whose first build reads the CA bundle inside the run's loop, before the first call
        if tls:
            ssl_context()
        self._free = asyncio.Semaphore(self.concurrency)
        self._slot = _Slot(self)
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._heads: dict[tuple[Any, ...], bytes] = {}
        self._closed = False

    def slot(self) -> _Slot:
        return self._slot

    async def send(
        self,
        lease: Any,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes = b"",
        max_body: int = MAX_RESPONSE_BYTES,
    ) -> Reply:
        """One request, inside a slot (``lease`` is what ``slot()`` gave); the answer is read
        whole, never more than ``max_body`` of its body. A pooled connection the server turns out
        to have dropped before the request left is replaced by a fresh one, once."""
        origin, target = _split(url)
        head = self._head(method, origin, target, headers, body)
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if conn.reusable():
                try:
                    return await self._exchange(conn, origin, head, body, method, max_body)
                except _NotSent:
                    break
            conn.abort()
        return await self._exchange(await self._connect(origin), origin, head, body, method, max_body)

    def _head(
        self, method: str, origin: _Origin, target: str, headers: dict[str, str], body: bytes
    ) -> bytes:
        key = (method, origin, target, *headers.items())
        start = self._heads.get(key)
        if start is None:
            if len(self._heads) > 256:
                self._heads.clear()
            start = self._heads[key] = _request_head(method, origin, target, headers)
        if body or method not in _NO_BODY_METHODS:
            return start + b"Content-Length: %d\r\n\r\n" % len(body)
        return start + b"\r\n"

    async def _connect(self, origin: _Origin) -> _Connection:
        if self._closed:
            raise RemoteClosed("the endpoint's connections are closed")
        loop = asyncio.get_running_loop()
        reader = _Reader(MAX_LINE_BYTES, loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        tls = origin.scheme == "https"
        async with asyncio.timeout(self.connect_timeout):
            transport, _ = await loop.create_connection(
                lambda: protocol,
                origin.host,
                origin.port,
                ssl=ssl_context() if tls else None,
                server_hostname=origin.host if tls else None,
            )
        return _Connection(reader, asyncio.StreamWriter(transport, protocol, reader, loop))

    async def _exchange(
        self, conn: _Connection, origin: _Origin, head: bytes, body: bytes, method: str,
        max_body: int,
    ) -> Reply:
        self._busy.add(conn)
        try:
            await conn.write(head, body)
            reply = await conn.read_reply(method, max_body)
        except BaseException:  # a timeout or cancel too: a half-read answer poisons the connection
            conn.abort()
            raise
        finally:
            self._busy.discard(conn)
        if conn.keep_alive and not self._closed:
            self._idle.setdefault(origin, []).append(conn)
        else:
            conn.writer.close()
        return reply

    async def aclose(self) -> None:
        """Close every connection; one still in use is aborted (its request fails)."""
        self._closed = True
        for conn in list(self._busy):
            conn.abort()
        idle = [conn for conns in self._idle.values() for conn in conns]
        self._idle.clear()
        await asyncio.gather(*(conn.aclose() for conn in idle), return_exceptions=True)


class _Shared:
    def __init__(self, pools: EndpointPool) -> None:
        self.pools = pools
        self.users = 0


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Shared]] = (
    weakref.WeakKeyDictionary()
)


def open_pools(key: str, concurrency: int, connect_timeout: float, tls: bool = True) -> EndpointPool:
    """The pool of endpoint ``key`` on the running loop, shared by every client of that endpoint
    (two judges of one composite grader, or of one suite, share one concurrency limit: the first
    client's, as every client of one run resolves the same endpoint and run concurrency). Outside
    a running loop each caller gets its own. Pair with ``close_pools``. ``tls`` false: the
    endpoint is plain http (no TLS context is built up front)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return EndpointPool(concurrency, connect_timeout, tls)
    shared = _SHARED.setdefault(loop, {})
    entry = shared.get(key)
    if entry is None:
        entry = shared[key] = _Shared(EndpointPool(concurrency, connect_timeout, tls))
    entry.users += 1
    return entry.pools


async def close_pools(pools: EndpointPool) -> None:
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
