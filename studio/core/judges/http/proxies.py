"""Which proxy a judge call goes through, read the way curl and every other HTTP tool reads it.

An endpoint's own ``proxy`` (``endpoints add --proxy URL``) wins; else the environment:
``https_proxy``/``HTTPS_PROXY`` for an https URL, ``http_proxy``/``HTTP_PROXY`` for an http one,
then ``all_proxy``/``ALL_PROXY`` (the lower-case name first, as curl reads them). ``no_proxy``/
``NO_PROXY`` lists hosts that go direct: a name matches itself and every name under it
(``example.com`` and ``.example.com`` both cover ``api.example.com``), an IP address or a CIDR block
matches addresses, ``*`` matches everything. ``no_proxy`` also applies to an endpoint's own proxy,
so a company-wide exception holds for every endpoint (as curl's ``--noproxy`` list does).
Loopback (``localhost``, 127.0.0.0/8, ::1: a local llama.cpp server, the demo judge) never takes
the environment's proxy, which cannot reach this machine's loopback; only an endpoint's own proxy
applies there.

Credentials in a proxy URL (``http://user:secret@proxy:3128``) come only from the environment, are
sent to the proxy only (``Proxy-Authorization``), and are never stored or printed: ``shown`` is
the URL without them. The library refuses an endpoint proxy that holds credentials
(``EndpointConfig``).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from .errors import JudgeError

PROXY_SCHEMES = ("http", "https")


class ProxyError(JudgeError):
    """A proxy setting the studio cannot use (a scheme it does not speak, no host)."""


@dataclass(frozen=True, slots=True)
class Proxy:
    """A proxy to use: ``url`` without credentials, and the credentials apart."""

    url: str
    source: str  # "the endpoint's proxy" or the environment variable's name
    username: str | None = None
    password: str | None = None

    @property
    def shown(self) -> str:
        """What the Test button and ``endpoints test`` print: never the credentials."""
        login = " (with credentials)" if self.username else ""
        return f"{self.url} from {self.source}{login}"


def split_proxy_url(value: str, source: str) -> Proxy:
    """A ``Proxy`` from a proxy URL; a bare ``host:port`` is an http proxy (as curl takes it)."""
    text = value.strip()
    if "://" not in text:
        text = f"http://{text}"
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in PROXY_SCHEMES:
        raise ProxyError(
            f"the proxy in {source} is a {scheme}:// proxy; the studio speaks to http:// and "
            "https:// proxies only"
        )
    try:
        port = parts.port
    except ValueError:
        raise ProxyError(f"the proxy in {source} has a port that is not a number") from None
    if not parts.hostname:
        raise ProxyError(f"the proxy in {source} names no host")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = 443 if scheme == "https" else 80
    url = f"{scheme}://{host}:{port or default}"
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    return Proxy(url=url, source=source, username=username, password=password)


def _env(environ: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """(value, variable name) of ``name`` in lower then upper case; an empty value is unset."""
    for variable in (name.lower(), name.upper()):
        value = environ.get(variable, "").strip()
        if value:
            return value, variable
    return None


def bypassed(host: str, no_proxy: str) -> bool:
    """Whether ``no_proxy`` sends ``host`` direct (names, their suffixes, IPs, CIDR blocks, *)."""
    host = host.strip("[]").rstrip(".").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in no_proxy.split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if address is not None:
            # 10.0.0.1:8080 and [::1]:8080 are read as the address alone
            if entry.startswith("["):
                bare = entry[1:].split("]", 1)[0]
            else:
                bare = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
            try:
                if address in ipaddress.ip_network(bare, strict=False):
                    return True
            except ValueError:
                pass
            continue
        # a port in an entry (example.com:8080) is read as the name alone, as curl does
        name = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
        name = name.lstrip("*").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _loopback(host: str) -> bool:
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def proxy_for(
    url: str, endpoint_proxy: str | None = None, environ: Mapping[str, str] | None = None
) -> Proxy | None:
    """The proxy a request to ``url`` goes through, or None for a direct connection."""
    environ = os.environ if environ is None else environ
    parts = urlsplit(url)
    host = parts.hostname or ""
    exceptions = _env(environ, "no_proxy")
    if exceptions is not None and bypassed(host, exceptions[0]):
        return None
    if endpoint_proxy:
        return split_proxy_url(endpoint_proxy, "the endpoint's proxy")
    if _loopback(host):
        return None
    scheme = parts.scheme.lower()
    for name in (f"{scheme}_proxy", "all_proxy"):
        found = _env(environ, name)
        if found is not None:
            return split_proxy_url(*found)
    return None


def proxy_refused(proxy: Proxy, status: int, reason: str = "") -> str:
    """A proxy's 407: it wants credentials (or refused those given). The endpoint was never reached,
    so the sentence names the proxy and where its credentials go, not the endpoint's key."""
    said = f"HTTP {status}" + (f" {reason}" if reason else "")
    if proxy.username is not None:
        fix = f"check the user and password in {proxy.source}"
    elif proxy.source == "the endpoint's proxy":
        fix = ("the library never stores proxy credentials: drop the endpoint's own proxy and give the "
               "proxy as http://USER:PASSWORD@HOST:PORT in HTTPS_PROXY (https endpoints) or HTTP_PROXY (http)")
    else:
        fix = f"give them in {proxy.source} as http://USER:PASSWORD@HOST:PORT"
    return (f"the proxy {proxy.url} ({proxy.source}) refused the request for lack of valid proxy "
            f"credentials ({said}): {fix}; the endpoint itself was not reached")


def scheme_hint(url: str, endpoint_proxy: str | None = None,
                environ: Mapping[str, str] | None = None) -> str:
    """Why a direct connection was tried although a proxy variable is set: it is the other scheme's
    (HTTPS_PROXY covers https:// URLs only, HTTP_PROXY http:// ones). '' when that is not the case."""
    environ = os.environ if environ is None else environ
    try:
        if proxy_for(url, endpoint_proxy, environ) is not None:
            return ""
    except ProxyError:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    exceptions = _env(environ, "no_proxy")
    if endpoint_proxy or _loopback(host) or (exceptions is not None and bypassed(host, exceptions[0])):
        return ""
    scheme = parts.scheme.lower()
    other = "http" if scheme == "https" else "https"
    found = _env(environ, f"{other}_proxy")
    if found is None:
        return ""
    wanted = f"{scheme.upper()}_PROXY"
    return (f" ({found[1]} is set, but it applies to {other}:// URLs only; this endpoint is {scheme}://, "
            f"which goes through {wanted}: set {wanted} too, or add the proxy to the endpoint with "
            "`endpoints add ... --proxy URL`)")


def describe_route(url: str, endpoint_proxy: str | None = None) -> str:
    """One line for the Test button and ``endpoints test``: how a call to ``url`` travels."""
    try:
        proxy = proxy_for(url, endpoint_proxy)
    except ProxyError as exc:
        return str(exc)
    if proxy is None:
        return "direct connection (no proxy)"
    return f"through the proxy {proxy.shown}"
