"""HTTP under the judge client: one aiohttp session per endpoint, with every bound the host needs.

Why aiohttp: measured against httpx and the studio's former hand-written HTTP/1.1 client on the
bench's judge workloads (bench/README.md, section 1), aiohttp's C parser keeps a call within the
1.3x-of-a-bare-client goal, and it speaks what analysts' networks need: proxies (absolute-form
requests for http, CONNECT tunnels for https, https proxies), TLS with a given trust store.

What this module adds on top:

- **No answer attributed to another request.** aiohttp parses whatever a server sends, also on an
  idle pooled connection, and would hand a stray answer queued there to the next request. A
  connection is reused only when nothing arrived since its last answer was read whole (the
  connector below counts bytes received, and aiohttp's own ``should_close`` covers a stray parsed
  together with the answer); a timed-out, cancelled or failed request closes its connection.
  (HTTP/1.1 cannot tell a stray that arrives after the next request left from that request's
  answer; what the client can see, it refuses.)
- **Bounds**: status and header lines (``MAX_LINE_BYTES``), header count (``MAX_HEADERS``), the
  body (``MAX_RESPONSE_BYTES``: ``BodyTooLarge``), including a gzip body's decompressed size (a
  decompression bomb is refused with a sentence), and time (the caller's one ``asyncio.timeout``
  per request; ``connect_timeout`` to open a connection). Redirects are returned, never followed.
- **Routes**: the proxy for each URL (``proxies.proxy_for``: the endpoint's, else the environment's,
  ``no_proxy`` honoured), the trust store (``tls.ssl_context``: SSL_CERT_FILE/SSL_CERT_DIR or
  certifi, plus the endpoint's CA bundle).
- **Words for failures**: a refused connection, an unknown host, an untrusted certificate or a
  proxy's refusal is one sentence (``ConnectionFailed``), never an errno.
- **A polite client**: ``User-Agent: grader-studio/VERSION`` and ``Accept-Encoding: gzip``.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import functools
import ssl
import weakref
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

from yarl import URL

from studio import __version__

from .credentials import remember_secret, scrub
from .errors import CredentialsRefused, JudgeError
from .lean_aiohttp import ClientRequest, Connection, ConnectionKey, ResponseHandler, Trace, aiohttp
from .proxies import Proxy, proxy_for, proxy_refused, scheme_hint
from .tls import TrustStoreError, ssl_context

#: the most of one answer kept in memory (after decompression); past it the call is retried
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
#: the longest status line or header line read from a server
MAX_LINE_BYTES = 16 * 1024
MAX_HEADERS = 100
_READ_BYTES = 64 * 1024

USER_AGENT = f"grader-studio/{__version__}"


class BodyTooLarge(Exception):
    """The server sent (or announced, or its gzip body expands to) more than the cap: retryable."""

    def __init__(self, limit: int, compressed: bool = False) -> None:
        mib = limit // (1024 * 1024)
        said = (f"the server's gzip answer expands past {mib} MiB (the cap; a decompression bomb?)"
                if compressed else f"response body larger than {mib} MiB (the cap)")
        super().__init__(said)
        self.limit = limit


class HTTPProtocolError(JudgeError):
    """The server's answer is not HTTP/1.x as the studio reads it, or cannot be decoded."""


class ConnectionFailed(JudgeError):
    """No answer could be had: the sentence says why (refused, unknown host, untrusted
    certificate, the proxy's refusal, a connection dropped mid-answer)."""


class RemoteClosed(ConnectionFailed):
    """The server closed the connection before its answer was whole."""


#: what a transport failure looks like, whichever layer raised it
TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (TimeoutError,)
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (JudgeError, OSError)


@dataclass(slots=True)
class Reply:
    status: int
    headers: Mapping[str, str]  # case-insensitive (aiohttp's): headers.get("retry-after")
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class _CountingHandler(ResponseHandler):
    """aiohttp's protocol, counting the bytes the socket delivered: a pooled connection that
    received anything after its last answer was read whole (a stray answer, a 408) is stale."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.received = 0
        self.settled = 0
        self.last_answer: bytes | None = None

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        super().data_received(data)


class _Connector(aiohttp.TCPConnector):
    """A TCP connector that never hands out a connection something arrived on while it was idle,
    and tells the request which connection it got (``_EXCHANGE``)."""

    def __init__(self, *, limit: int, limit_per_host: int, ssl: ssl.SSLContext | bool, ttl_dns_cache: int,
                 enable_cleanup_closed: bool) -> None:
        super().__init__(limit=limit, limit_per_host=limit_per_host, ssl=ssl, ttl_dns_cache=ttl_dns_cache,
                         enable_cleanup_closed=enable_cleanup_closed)
        # aiohttp's slot is typed for its own handler class: a method returning one, wrapped the same way
        self._factory = functools.partial(self._counting_handler)

    def _counting_handler(self) -> ResponseHandler:
        return _CountingHandler(loop=self._loop)

    async def connect(self, req: ClientRequest, traces: list[Trace], timeout: aiohttp.ClientTimeout) -> Connection:
        for _ in range(self.limit or 64):
            connection = await super().connect(req, traces, timeout)
            protocol = connection.protocol
            if protocol is None or not (
                protocol.should_close
                or (isinstance(protocol, _CountingHandler) and protocol.received != protocol.settled)
            ):
                _EXCHANGE.set(protocol)
                return connection
            protocol.force_close()  # a stray answer or a 408 waits on it: never read it
            connection.release()
        raise RemoteClosed("the server sent data before it was asked, on every connection tried: "
                           "it does not behave as an HTTP server")

    def _release(self, key: ConnectionKey, protocol: ResponseHandler, *, should_close: bool = False) -> None:
        if isinstance(protocol, _CountingHandler):  # every one is (the factory's); aiohttp types its own
            protocol.settled = protocol.received
        super()._release(key, protocol, should_close=should_close)


#: the protocol (connection) the current task's request went out on
_EXCHANGE: contextvars.ContextVar[ResponseHandler | None] = contextvars.ContextVar("judge_exchange", default=None)


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
    (never more connections than that), through the endpoint's proxy and trust store."""

    def __init__(
        self,
        concurrency: int,
        connect_timeout: float,
        tls: bool = True,
        *,
        proxy: str | None = None,
        ca_bundle: str | None = None,
    ) -> None:
        self.concurrency = max(1, concurrency)
        self.connect_timeout = connect_timeout
        self.proxy = proxy
        self.ca_bundle = ca_bundle
        self._tls = tls or bool(ca_bundle)
        self._ssl: ssl.SSLContext | None = None
        self._free = asyncio.Semaphore(self.concurrency)
        self._slot = _Slot(self)
        self._session: aiohttp.ClientSession | None = None
        self._routes: dict[str, tuple[Proxy | None, dict[str, str] | None, bool, URL]] = {}
        self._closed = False

    def slot(self) -> _Slot:
        return self._slot

    def _open(self, tls_proxy: bool = False) -> aiohttp.ClientSession:
        """The session, made on first use (inside the run's loop, which aiohttp binds it to);
        ``tls_proxy``: the calls go through an https proxy, whose certificate is checked against
        the studio's trust store as an https endpoint's is (aiohttp's own default context, the
        system store, would check it otherwise, also for a plain-http endpoint)."""
        if self._closed:
            raise RemoteClosed("the endpoint's connections are closed")
        # a plain-http endpoint (a local server, the scripted judge) reached directly or through an
        # http proxy builds no TLS context; a CA bundle that cannot be read is the samples' error
        # (TrustStoreError, a sentence)
        if self._tls or tls_proxy:
            self._ssl = ssl_context(self.ca_bundle)
        connector = _Connector(
            limit=self.concurrency, limit_per_host=0, ssl=self._ssl or True,
            ttl_dns_cache=300, enable_cleanup_closed=False,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"},
            skip_auto_headers=("Content-Type",),
            auto_decompress=False,
            trust_env=False,  # proxies.py reads the environment, so the Test button can say what it read
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout),
            max_line_size=MAX_LINE_BYTES,
            max_field_size=MAX_LINE_BYTES,
            max_headers=MAX_HEADERS,
            read_bufsize=_READ_BYTES,
        )
        return self._session

    def route(self, url: str) -> tuple[Proxy | None, dict[str, str] | None, bool, URL]:
        """(the proxy, the proxy's credentials as a header, whether that header goes on the
        request itself, the parsed URL) for ``url``; the environment is read once a pool, and
        each URL parsed once. An https request's credentials go on the CONNECT only: inside the
        tunnel they would reach the judge."""
        found = self._routes.get(url)
        if found is None:
            proxy: Proxy | None = proxy_for(url, self.proxy)
            auth = None
            if proxy is not None and proxy.username is not None:
                pair = f"{proxy.username}:{proxy.password or ''}".encode()
                auth = {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
                if proxy.password:
                    remember_secret(proxy.password)
            if len(self._routes) > 64:
                self._routes.clear()
            plain = url[:5].lower() == "http:"
            found = self._routes[url] = (proxy, auth, plain, URL(url))
        return found

    async def send(
        self,
        lease: EndpointPool,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes = b"",
        max_body: int = MAX_RESPONSE_BYTES,
    ) -> Reply:
        """One request, inside a slot (``lease`` is what ``slot()`` gave); the answer is read
        whole (gzip decompressed), never more than ``max_body`` of it."""
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\0" in value:
                # the value may be a key: name the header, never print the value
                raise HTTPProtocolError(f"request header {name[:40]!r} holds a line break; not sent")
        route, auth, on_request, target = self.route(url)
        proxy = route.url if route is not None else None
        session = self._session or self._open(tls_proxy=proxy is not None and proxy[:6].lower() == "https:")
        if auth is not None and on_request:
            headers = {**headers, **auth}
        for _ in range(2):
            _EXCHANGE.set(None)
            try:
                async with session.request(
                    method, target, data=body if body or method == "POST" else None, headers=headers,
                    allow_redirects=False, proxy=proxy,
                    proxy_headers=None if on_request else auth, ssl=self._ssl or True,
                ) as response:
                    try:
                        content = await _read(response, max_body)
                    except BaseException:
                        response.close()  # a half-read answer poisons the connection
                        raise
                    if _settle(content, response.status):
                        return Reply(response.status, response.headers, content)
                    # the very answer this connection gave last time: a stray copy that arrived
                    # after this request left; the connection is dropped, ask again on another
                    response.close()
            except aiohttp.ConnectionTimeoutError:
                via = f" through the proxy {proxy}" if proxy else ""
                hint = scheme_hint(url) if route is None else ""
                raise ConnectionFailed(f"no connection to {_where(url)}{via} within "
                                       f"{self.connect_timeout:g} s (is the address right?){hint}") from None
            except (BodyTooLarge, JudgeError, TimeoutError, asyncio.CancelledError):
                raise
            except (aiohttp.ClientError, OSError, ValueError) as exc:
                raise describe(exc, url, route) from exc
        raise RemoteClosed(f"{_where(url)} answered twice with its previous answer; not trusted")

    async def aclose(self) -> None:
        """Close every connection; one still in use is aborted (its request fails)."""
        self._closed = True
        if self._session is not None:
            await self._session.close()


def _settle(content: bytes, status: int) -> bool:
    """Record a whole answer on its connection; False when a successful answer repeats that
    connection's previous one byte for byte. Real servers stamp each answer with its own id, so a
    repeat is a server's double send read as this request's answer (it arrived after the request
    left), not an answer to it. Error answers (a 429's fixed body) do repeat, and are not judged."""
    protocol = _EXCHANGE.get()
    # every connection's protocol is a _CountingHandler (the connector's factory makes them)
    if not isinstance(protocol, _CountingHandler) or not 200 <= status < 300:
        return True
    previous = protocol.last_answer
    protocol.last_answer = content
    if previous is None or previous != content or not content:
        return True
    protocol.force_close()
    return False


async def _read(response: aiohttp.ClientResponse, max_body: int) -> bytes:
    declared = response.content_length
    if declared is not None and declared > max_body:
        raise BodyTooLarge(max_body)
    coding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if coding in ("", "identity"):
        inflate = None
    elif coding in ("gzip", "x-gzip", "deflate"):
        inflate = zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in coding else 0))
    else:
        raise HTTPProtocolError(
            f"the server's answer is compressed as {coding[:40]!r}, which the studio did not ask for"
        )
    chunks: list[bytes] = []
    size = raw = 0
    stream = response.content
    while True:
        data = await stream.read(_READ_BYTES)
        if not data:
            break
        raw += len(data)
        if raw > max_body:
            raise BodyTooLarge(max_body)
        if inflate is not None:
            data = _inflate(inflate, data, max_body - size, max_body)
        size += len(data)
        chunks.append(data)
    if inflate is not None:
        try:
            tail = inflate.flush()
        except zlib.error as exc:
            raise HTTPProtocolError(f"the server's gzip answer is corrupt ({exc})") from None
        if size + len(tail) > max_body:
            raise BodyTooLarge(max_body, compressed=True)
        chunks.append(tail)
    return b"".join(chunks)


def _inflate(inflate: zlib._Decompress, data: bytes, room: int, limit: int) -> bytes:
    """Decompress ``data``, never producing more than ``room`` bytes (a bomb stops here)."""
    try:
        out = inflate.decompress(data, room + 1)
    except zlib.error as exc:
        raise HTTPProtocolError(f"the server's gzip answer is corrupt ({exc})") from None
    if len(out) > room or inflate.unconsumed_tail:
        raise BodyTooLarge(limit, compressed=True)
    return out


def _where(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{f'[{host}]' if ':' in host else host}:{port}"


def describe(exc: BaseException, url: str, route: Proxy | None = None) -> JudgeError:
    """One sentence for a failure to reach ``url`` (through the proxy ``route``); never an errno.
    A proxy's 407 is ``CredentialsRefused`` (no call of the run would get through); a failed direct
    connection while only the other scheme's proxy variable is set says so (``scheme_hint``)."""
    where = _where(url)
    proxy = route.url if route is not None else None
    via = f" through the proxy {proxy}" if proxy else ""
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        if exc.status == 407 and route is not None:
            return CredentialsRefused(proxy_refused(route, exc.status, exc.message or ""), status=407)
        reason = f"HTTP {exc.status}" + (f" {exc.message}" if exc.message else "")
        return ConnectionFailed(f"the proxy {proxy} refused to reach {where}: {reason}")
    said = _direct(exc, url, where, proxy, via)
    if route is None and isinstance(said, ConnectionFailed) and not isinstance(said, RemoteClosed):
        hint = scheme_hint(url)
        if hint:
            return ConnectionFailed(f"{said}{hint}")
    return said


def _direct(exc: BaseException, url: str, where: str, proxy: str | None, via: str) -> JudgeError:
    """``describe`` of a failure other than a proxy's answer."""
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return ConnectionFailed(f"cannot connect to the proxy {proxy}: {_os_reason(exc.os_error)}")
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        detail = getattr(exc.certificate_error, "verify_message", "") or str(exc.certificate_error)
        if proxy is not None and url[:5].lower() == "http:":  # no TLS with the endpoint: the proxy's
            where, via = f"the proxy {proxy}", ""
        return ConnectionFailed(
            f"the TLS certificate of {where} is not trusted ({detail}){via}: if your company's CA "
            "signs it, give that CA with `endpoints add ... --ca-bundle FILE` or SSL_CERT_FILE"
        )
    if isinstance(exc, aiohttp.ClientConnectorSSLError | aiohttp.ClientSSLError):
        return ConnectionFailed(f"the TLS handshake with {where} failed{via} ({exc.os_error})")
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        host = urlsplit(url).hostname or "?"
        return ConnectionFailed(f"cannot resolve the host {host!r}{via} (is the URL right?)")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return ConnectionFailed(f"cannot connect to {where}{via}: {_os_reason(exc.os_error)}")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return RemoteClosed(f"{where} closed the connection without a whole answer")
    if isinstance(exc, aiohttp.ClientPayloadError):
        return RemoteClosed(f"{where} sent a body that was cut short or badly framed")
    if isinstance(exc, aiohttp.ClientResponseError):
        said = " ".join(str(exc.message).split())  # aiohttp's parser points with a caret
        return HTTPProtocolError(
            f"the answer from {where} is not HTTP/1.x as expected ({scrub(said)[:160]})"
        )
    if isinstance(exc, aiohttp.InvalidURL | ValueError):
        return ConnectionFailed(f"the URL {scrub(url)[:200]!r} cannot be requested ({exc})")
    if isinstance(exc, OSError):
        return ConnectionFailed(f"cannot reach {where}{via}: {_os_reason(exc)}")
    return ConnectionFailed(f"cannot reach {where}{via}: {exc.__class__.__name__}")


def _os_reason(error: OSError | None) -> str:
    """An OS error in words, as the run's preflight says them."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (is the server running, and is the port right?)"
    if isinstance(error, ConnectionResetError):
        return "the connection was reset"
    if isinstance(error, TimeoutError):
        return "no answer in time"
    if error is None:
        return "no detail"
    return (error.strerror or str(error) or error.__class__.__name__).rstrip(".")


class _Shared:
    def __init__(self, pools: EndpointPool) -> None:
        self.pools = pools
        self.users = 0


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Shared]] = (
    weakref.WeakKeyDictionary()
)


def open_pools(
    key: str,
    concurrency: int,
    connect_timeout: float,
    tls: bool = True,
    *,
    proxy: str | None = None,
    ca_bundle: str | None = None,
) -> EndpointPool:
    """The pool of endpoint ``key`` on the running loop, shared by every client of that endpoint
    (two judges of one composite grader, or of one suite, share one concurrency limit: the first
    client's, as every client of one run resolves the same endpoint and run concurrency). Outside
    a running loop each caller gets its own. Pair with ``close_pools``. ``tls`` false: the
    endpoint is plain http (no TLS context is built up front)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return EndpointPool(concurrency, connect_timeout, tls, proxy=proxy, ca_bundle=ca_bundle)
    shared = _SHARED.setdefault(loop, {})
    entry = shared.get(key)
    if entry is None:
        entry = shared[key] = _Shared(
            EndpointPool(concurrency, connect_timeout, tls, proxy=proxy, ca_bundle=ca_bundle))
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


__all__ = [
    "BodyTooLarge", "CONNECTION_ERRORS", "ConnectionFailed", "EndpointPool", "HTTPProtocolError",
    "MAX_HEADERS", "MAX_RESPONSE_BYTES", "RemoteClosed", "Reply", "TIMEOUT_ERRORS",
    "TrustStoreError", "USER_AGENT", "close_pools", "describe", "open_pools",
]
