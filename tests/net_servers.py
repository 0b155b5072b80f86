"""Servers on 127.0.0.1 for the judge path's network tests: a judge that answers each sample by
name (with hostile framing on request), a forward proxy (absolute-form requests and CONNECT
tunnels, each recorded) and a test certificate authority, all in a thread of their own."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gzip
import ipaddress
import json
import re
import ssl
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
SAMPLE = re.compile(r"SAMPLE-([A-Za-z0-9_-]+)")


class ThreadServer:
    """An asyncio server on 127.0.0.1 in its own thread; ``port`` once started."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
                pass
            finally:
                writer.close()

        async def start() -> None:
            server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.tls)
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def __enter__(self) -> ThreadServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
    """(request line, headers lower-cased, body) of one request; None when the client hung up."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return lines[0], headers, body


def answer_json(text: str, answer_id: str) -> bytes:
    return json.dumps({
        "id": answer_id, "object": "chat.completion", "model": "judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }).encode()


def verdict_for(sample: str) -> str:
    return json.dumps({"reasoning": f"this is about SAMPLE-{sample}", "verdict": "PASS"})


def response(body: bytes, extra: str = "") -> bytes:
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{extra}\r\n").encode() + body


@dataclass
class JudgeLog:
    """What a judge server saw: request lines and headers, in order."""

    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    answered: int = 0


def naming_judge(log: JudgeLog, hostile: bool = False,
                 check: Callable[[str, dict[str, str]], str | None] | None = None) -> Handler:
    """A judge whose every answer names the sample of its request (``SAMPLE-<id>`` in the prompt).

    ``hostile``: each answer is framed one of several ways a server may send it, in turn: plain;
    followed in the same write by a stray answer naming another sample; its head sent before the
    request's body is read, after two interim (1xx) answers; dripped in small pieces (status line,
    headers and body split mid-way, chunked with chunks split); gzip-encoded and split; and sent
    twice, the copy written once the next request on the connection has arrived (so no client
    can have seen it before sending that request). ``check``: a refusal
    (an error text) for a request the test does not accept, answered with HTTP 400."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        copy = b""
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if copy:  # the previous answer again, now that the next request has left the client
                writer.write(copy)
                copy = b""
            lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            log.requests.append((lines[0], headers))
            turn = log.answered
            log.answered += 1
            style = turn % 6 if hostile else 0
            if style == 2:  # early: interim answers and our head before the body is read
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n")
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")
                await writer.drain()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            refusal = check(lines[0], headers) if check else None
            if refusal is not None:
                text = json.dumps({"error": {"message": refusal}}).encode()
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(text), text))
                await writer.drain()
                continue
            found = SAMPLE.findall(body.decode("utf-8", "replace"))
            sample = found[-1] if found else "none"
            content = answer_json(verdict_for(sample), f"chatcmpl-{turn}")
            if style == 0:
                writer.write(response(content))
            elif style == 1:  # a stray answer for another sample right behind the real one
                stray = answer_json(verdict_for(f"stray{turn}"), f"chatcmpl-stray-{turn}")
                writer.write(response(content) + response(stray))
            elif style == 2:
                writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(content), content))
            elif style == 3:  # dripped: every piece its own write
                whole = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n"
                         + b"".join(b"%x\r\n%s\r\n" % (len(part), part)
                                    for part in (content[:7], content[7:40], content[40:]))
                         + b"0\r\n\r\n")
                for start in range(0, len(whole), 11):
                    writer.write(whole[start:start + 11])
                    await writer.drain()
                    await asyncio.sleep(0)
            elif style == 4:
                packed = gzip.compress(content)
                whole = response(packed, "Content-Encoding: gzip\r\n")
                middle = len(whole) // 2
                writer.write(whole[:middle])
                await writer.drain()
                await asyncio.sleep(0.001)
                writer.write(whole[middle:])
            else:  # a double send: this answer again, written ahead of the next request's answer
                writer.write(response(content))
                copy = response(content)
            await writer.drain()

    return handler


# --- a forward proxy -------------------------------------------------------------------------------


@dataclass
class ProxyLog:
    """What the proxy was asked: request lines (absolute-form or CONNECT) and the credentials."""

    lines: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)


def forward_proxy(log: ProxyLog, hosts: dict[str, int], need: str | None = None) -> Handler:
    """A forward proxy for the names in ``hosts`` (name -> a port on 127.0.0.1; no other name is
    reached): ``CONNECT name:port`` opens a tunnel, an absolute-form request is passed on over a
    connection of its own. ``need``: the Proxy-Authorization it requires (else 407)."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            log.lines.append(lines[0])
            log.authorizations.append(headers.get("proxy-authorization"))
            if need is not None and headers.get("proxy-authorization") != need:
                writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                             b"Proxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
                continue
            if method == "CONNECT":
                host = target.rsplit(":", 1)[0]
                if host not in hosts:
                    writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
                    return
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", hosts[host])
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
                await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
                return
            match = re.match(r"http://([^/:]+)(?::(\d+))?(/.*)", target)
            if match is None or match.group(1) not in hosts:
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
                continue
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", hosts[match.group(1)])
            kept = [line for line in lines[1:] if line and not line.lower().startswith("proxy-")]
            up_writer.write(f"{method} {match.group(3)} HTTP/1.1\r\n".encode()
                            + "\r\n".join(kept).encode() + b"\r\n\r\n" + body)
            await up_writer.drain()
            answer = await up_reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length: *(\d+)", answer).group(1))  # type: ignore[union-attr]
            answer += await up_reader.readexactly(length)
            up_writer.close()
            writer.write(answer)
            await writer.drain()

    return handler


# --- a test certificate authority ------------------------------------------------------------------


@dataclass
class TestCA:
    ca_pem: Path
    cert_pem: Path
    key_pem: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_pem, self.key_pem)
        return context


def make_ca(folder: Path, host: str) -> TestCA:
    """A root CA and a server certificate for ``host`` signed by it (PEM files in ``folder``)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Grader Studio test root CA")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[Any] = [x509.DNSName(host)]
    with contextlib.suppress(ValueError):
        names = [x509.IPAddress(ipaddress.ip_address(host))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    ca = TestCA(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    ca.ca_pem.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    ca.cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    ca.key_pem.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                             serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
    return ca
