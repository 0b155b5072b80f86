"""The judge path's HTTP client (aiohttp under judges/http/transport.py) against a raw server on
127.0.0.1 that sends what a test scripts.

Every byte a server sends is bounded (status and header lines, header count, the body), a head
that is not HTTP/1.x is a ``JudgeError`` that says what was wrong, a slow drip of bytes is stopped
by the request's deadline, and a connection is reused only when its last answer was read whole
and nothing arrived since (a server closing an idle connection costs no attempt).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
from collections.abc import Awaitable, Callable

import pytest

from studio.core.judges.http.chat import ChatMessage, ChatRequest
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.errors import EndpointCallError, JudgeError
from studio.core.judges.http.transport import (
    CONNECTION_ERRORS,
    MAX_HEADERS,
    BodyTooLarge,
    EndpointPool,
    HTTPProtocolError,
    RemoteClosed,
)
from studio.core.models.endpoints import EndpointConfig

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
ANSWER = b'{"ok": true}'


def ok(body: bytes = ANSWER, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One request (head and Content-Length body); b"" when the client hung up."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return b""
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


class Server:
    """Answers each connection with ``handler``; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1/chat/completions"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


def counted(requests: int = 10) -> Handler:
    """Keep-alive answers, each with its own id (as every real server stamps them)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for turn in range(requests):
            if not await read_request(reader):
                return
            writer.write(ok(b'{"id": %d}' % turn))
            await writer.drain()

    return handler


def keep_alive(answer: bytes, requests: int = 10) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(requests):
            if not await read_request(reader):
                return
            writer.write(answer)
            await writer.drain()

    return handler


def once(answer: bytes) -> Handler:
    return keep_alive(answer, requests=1)


async def post(pool: EndpointPool, url: str, max_body: int = 1024 * 1024, timeout: float = 5.0):
    async with asyncio.timeout(timeout), pool.slot() as lease:
        return await pool.send(lease, "POST", url, {"Content-Type": "application/json"}, b"{}",
                               max_body=max_body)


def exchange(handler: Handler, max_body: int = 1024 * 1024, timeout: float = 5.0):
    """The reply to one POST, or the exception it raised."""

    async def go():
        async with Server(handler) as url:
            pool = EndpointPool(4, 2.0, tls=False)
            try:
                return await post(pool, url, max_body, timeout)
            except Exception as exc:
                return exc
            finally:
                await pool.aclose()

    return asyncio.run(go())


# --- what a well-behaved server sends ------------------------------------------------------------


def test_keep_alive_reuses_one_connection() -> None:
    async def go() -> None:
        server = Server(counted())
        async with server as url:
            pool = EndpointPool(1, 2.0, tls=False)
            for turn in range(5):
                reply = await post(pool, url)
                assert (reply.status, reply.content) == (200, b'{"id": %d}' % turn)
            await pool.aclose()
        assert server.connections == 1

    asyncio.run(go())


def test_chunked_answer_with_extensions_and_trailers() -> None:
    body = b"5;name=x\r\n{\"ok\"\r\n7\r\n: true}\r\n0\r\nX-Trailer: 1\r\n\r\n"
    reply = exchange(once(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body))
    assert reply.content == ANSWER


def test_interim_answers_are_skipped_and_headers_lower_cased() -> None:
    reply = exchange(once(b"HTTP/1.1 100 Continue\r\n\r\n" + ok(extra=b"X-Thing:  v \r\n")))
    assert reply.status == 200 and reply.headers["x-thing"] == "v"


def test_http_1_0_answer_read_until_close_and_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.0 200 OK\r\n\r\n" + ANSWER)

    async def go() -> None:
        server = Server(handler)
        async with server as url:
            pool = EndpointPool(1, 2.0, tls=False)
            for _ in range(2):
                assert (await post(pool, url)).content == ANSWER
            await pool.aclose()
        assert server.connections == 2

    asyncio.run(go())


def test_a_redirect_is_returned_not_followed() -> None:
    reply = exchange(once(b"HTTP/1.1 302 Found\r\nLocation: http://10.0.0.1/\r\nContent-Length: 0\r\n\r\n"))
    assert reply.status == 302 and reply.headers["location"] == "http://10.0.0.1/"


# --- what a hostile server sends -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "Bad status line"),
        (b"HTTP/2 200\r\n\r\n", "Bad status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "Bad status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "Invalid header token"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"a" * 20_000 + b"\r\n\r\n", "Got more than 16384 bytes"),
        (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1))
         + b"\r\n", "Too many headers"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Length: 13\r\n\r\n",
         "Duplicate Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Invalid character in Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
         "Invalid character in chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n",
         "Expected LF after chunk data"),
    ],
)
def test_a_malformed_or_oversized_head_is_a_judge_error(answer: bytes, said: str) -> None:
    error = exchange(once(answer))
    assert isinstance(error, HTTPProtocolError) and isinstance(error, JudgeError), error
    assert "is not HTTP/1.x as expected" in str(error) and said in str(error)
    assert "\n" not in str(error)  # one line, whatever the parser's own message looked like
    assert isinstance(error, CONNECTION_ERRORS)  # retried by the client like a dropped connection


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n",  # announced
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"400\r\n" + b"a" * 1024 + b"\r\n" + b"d00\r\n" + b"a" * 0xD00 + b"\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
        % (len(gzip.compress(b"a" * 5000)), gzip.compress(b"a" * 5000)),  # past the cap inflated
        b"HTTP/1.0 200 OK\r\n\r\n" + b"a" * 5000,  # until close
    ],
)
def test_a_body_past_the_cap_is_refused(answer: bytes) -> None:
    assert isinstance(exchange(once(answer), max_body=4096), BodyTooLarge)


def test_a_slow_drip_of_bytes_is_stopped_by_the_deadline() -> None:
    async def go() -> None:
        hung_up = asyncio.Event()

        async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\n")
            with contextlib.suppress(ConnectionError):
                for _ in range(200):  # bounded: 10 s at most
                    writer.write(b"X")
                    await writer.drain()
                    await asyncio.sleep(0.05)
                    if reader.at_eof():
                        break
            hung_up.set()

        async with Server(drip) as url:
            pool = EndpointPool(1, 2.0, tls=False)
            with pytest.raises(TimeoutError):
                await post(pool, url, timeout=0.3)
            await asyncio.wait_for(hung_up.wait(), 5)  # the client closed its end
            await pool.aclose()

    asyncio.run(go())


def test_a_cancelled_request_closes_its_connection() -> None:
    async def go() -> None:
        hung_up = asyncio.Event()

        async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf")
            await reader.read(1)  # b"" once the client hangs up
            hung_up.set()

        server = Server(stall)
        async with server as url:
            pool = EndpointPool(1, 2.0, tls=False)
            task = asyncio.create_task(post(pool, url))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.wait_for(hung_up.wait(), 5)
            connector = pool._session.connector  # type: ignore[union-attr]
            assert not any(connector._conns.values())  # never handed to the next call
            await pool.aclose()

    asyncio.run(go())


def test_a_header_value_cannot_smuggle_a_header() -> None:
    async def go() -> None:
        async with Server(once(ok())) as url:
            pool = EndpointPool(1, 2.0, tls=False)
            async with pool.slot() as lease:
                with pytest.raises(HTTPProtocolError) as raised:
                    await pool.send(lease, "POST", url, {"Authorization": "Bearer k\r\nX-Evil: 1"})
            assert "k\r\n" not in str(raised.value) and "authorization" in str(raised.value).lower()
            assert "Bearer" not in str(raised.value)
            await pool.aclose()

    asyncio.run(go())


# --- connections the server closes ---------------------------------------------------------------


def test_an_idle_connection_closed_by_the_server_is_replaced_without_a_failure() -> None:
    async def go() -> None:
        server = Server(once(ok()))  # answers one request, then hangs up
        async with server as url:
            pool = EndpointPool(1, 2.0, tls=False)
            for _ in range(3):
                assert (await post(pool, url)).content == ANSWER
                await asyncio.sleep(0.05)  # the hang-up reaches the client while idle
            await pool.aclose()
        assert server.connections == 3

    asyncio.run(go())


def test_bytes_sent_on_an_idle_connection_are_never_read_as_the_next_answer() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(ok())
        # an unsolicited "408" while the connection is idle, connection kept open
        writer.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        while await read_request(reader):
            writer.write(ok())
            await writer.drain()

    async def go() -> None:
        server = Server(handler)
        async with server as url:
            pool = EndpointPool(1, 2.0, tls=False)
            assert (await post(pool, url)).content == ANSWER
            await asyncio.sleep(0.05)
            reply = await post(pool, url)
            assert (reply.status, reply.content) == (200, ANSWER)  # a fresh connection's answer
            await pool.aclose()
        assert server.connections == 2

    asyncio.run(go())


def test_a_server_that_hangs_up_without_answering_is_a_connection_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    error = exchange(hang_up)
    assert isinstance(error, RemoteClosed) and isinstance(error, CONNECTION_ERRORS)
    assert "closed the connection without a whole answer" in str(error)


def test_the_judge_client_names_a_malformed_status_line() -> None:
    """Through the client every judge uses: retried, then one sentence for the sample's error."""

    async def go() -> str:
        async with Server(keep_alive(b"HELLO THERE\r\n\r\n")) as url:
            base = url.removesuffix("/chat/completions")
            config = EndpointConfig(name="hostile", base_url=base, model="m", max_retries=1,
                                    retry_backoff=0.0, timeout=2.0)
            client = JudgeClient(config, use_cache=False)
            try:
                await client.chat(ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
            except EndpointCallError as exc:
                return str(exc)
            finally:
                await client.aclose()
        return "no error"

    message = asyncio.run(go())
    assert "is not HTTP/1.x as expected (Bad status line" in message and "HELLO THERE" in message
    assert "gave up after 2 attempts" in message
    json.dumps(message)  # a plain sentence, storable as the sample's error


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 4\r\n\r\nabcd",
         "compressed as 'br', which the studio did not ask for"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\n\r\nnot gzip",
         "gzip answer is corrupt"),
    ],
)
def test_an_answer_in_an_encoding_not_asked_for_or_corrupt_is_said(answer: bytes, said: str) -> None:
    error = exchange(once(answer))
    assert isinstance(error, HTTPProtocolError) and said in str(error), error


def test_a_gzip_answer_is_read_whole() -> None:
    packed = gzip.compress(ANSWER * 100)
    reply = exchange(once(ok(packed, b"Content-Encoding: gzip\r\n")))
    assert reply.content == ANSWER * 100


def test_a_connection_that_is_never_accepted_is_said_in_words() -> None:
    """A listener whose accept queue is full drops the handshake: the connect times out."""
    import socket

    from studio.core.judges.http.transport import ConnectionFailed

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):  # fill the accept queue (never accepted)
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            fillers.append(filler)

        async def go() -> BaseException | None:
            pool = EndpointPool(1, 0.3, tls=False)
            try:
                await post(pool, f"http://127.0.0.1:{port}/v1/chat/completions", timeout=10)
            except BaseException as exc:  # noqa: BLE001 - the test inspects what was raised
                return exc
            finally:
                await pool.aclose()
            return None

        error = asyncio.run(go())
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
    assert isinstance(error, ConnectionFailed), error
    assert f"no connection to 127.0.0.1:{port} within 0.3 s" in str(error)
