"""Configuration a run needs, checked before the run is recorded.

A run that can only fail (its judge names an endpoint the library does not have, or names none
while the library has several, or the endpoint's server cannot be reached) is refused with the
reason before ``start_run`` writes a row, so ``runs list`` never shows a "failed 0/N" run that never
graded anything, and a run against a server that is down ends at once with one sentence instead
of retrying every sample. The reachability check is a TCP connection to the endpoint's host and
port: it costs no tokens and needs no key, and it is what "down" means (refused, unresolvable,
no answer); an endpoint that accepts connections and then fails is the samples' business.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

from studio.core.judges.http.credentials import unset_key_variable
from studio.core.judges.http.proxies import ProxyError, proxy_for, scheme_hint
from studio.core.models import GraderDefinition, walk
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library, LibraryError

#: how long the preflight waits for a connection (the endpoint's own timeout if shorter)
CONNECT_SECONDS = 5.0


class EndpointUnreachable(LibraryError):
    """The run's judge endpoint does not accept connections: the run could not be done (exit 2)."""


class KeyNotSet(LibraryError):
    """An endpoint the run calls takes its key from a variable that is not set: said before the
    first call, instead of sending no key and reporting every sample's 401 (exit 2)."""

    exit_code = 2


def needed_endpoints(definition: GraderDefinition) -> Iterator[str | None]:
    """The endpoint each part of a grader calls with the user's key (None: the run's, or the
    library's only one): a prompt judge's, a model-backed function's, a composite's or a jury's
    parts' (``walk``), read from the models alone. The key check before a run and the endpoint
    approvals (engine/request.py) both read it."""
    for grader in walk(definition):
        yield from grader.own_endpoints()


def endpoint_configs(library: Library, definition: GraderDefinition, endpoint: str | None) -> list[EndpointConfig]:
    """The endpoints a run of ``definition`` calls (``needed_endpoints``), each once, as the
    library resolves them (``endpoint``, the run's, wins); ``NoEndpoint`` / ``EndpointNotFound``:
    sentences. The key check and a cost cap's price check read the same list."""
    configs: dict[str, EndpointConfig] = {}
    for name in needed_endpoints(definition):
        config = library.endpoints.resolve(endpoint, name)
        configs[config.name] = config
    return list(configs.values())


def check_run_configuration(library: Library, definition: GraderDefinition, endpoint: str | None) -> None:
    """Raise the library's refusal (a sentence) when the run could not reach its judge endpoint,
    or an endpoint's key variable is not set (``check_keys``).

    A grader with a quorum (a jury) is built to outlive a part that is down: its run is refused only
    when fewer parts than its quorum could answer (the others are marked per sample, as at run time)."""
    configs = check_keys(library, definition, endpoint)
    needed = definition.parts_needed()
    if needed is not None:
        _check_quorum(library, definition, needed, endpoint)
        return
    for config in configs:
        check_reachable(config)


def check_keys(library: Library, definition: GraderDefinition, endpoint: str | None,
               then: str = "the run was not started and nothing was recorded") -> list[EndpointConfig]:
    """The endpoints the grader calls (a jury's and a composite's parts included); ``KeyNotSet``
    (a sentence ending in ``then``) when one takes its key from a variable that is not set."""
    configs = endpoint_configs(library, definition, endpoint)
    for config in configs:
        problem = unset_key_variable(config)
        if problem is not None:
            raise KeyNotSet(f"{problem}; {then}")
    return configs


def _check_quorum(library: Library, jury: GraderDefinition, needed: int, endpoint: str | None) -> None:
    down: list[str] = []
    reasons: dict[str, str] = {}
    jurors = list(zip(jury.part_labels(), jury.parts(), strict=True))
    for label, part in jurors:
        try:
            check_run_configuration(library, part, endpoint)
        except EndpointUnreachable as exc:
            down.append(label)
            reasons.setdefault(str(exc), label)
    if len(jurors) - len(down) < needed:
        first = next(iter(reasons))
        raise EndpointUnreachable(f"only {len(jurors) - len(down)} of {len(jurors)} jurors "
                                  f"can be reached, fewer than the quorum of {needed} "
                                  f"(unreachable: {', '.join(down)}): {first}")


def _origin(url: str) -> tuple[str, str, int]:
    """(shown address without credentials, host, port) of a base URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    shown_host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown_host}:{port}", host, port


def check_reachable(config: EndpointConfig) -> None:
    """Raise ``EndpointUnreachable`` when nothing accepts a connection at the endpoint's address,
    or at its proxy's when the calls go through one (the endpoint's own host may resolve nowhere
    but at the proxy)."""
    try:
        proxy = proxy_for(config.url_for("chat/completions"), config.proxy)
    except ProxyError as exc:
        raise EndpointUnreachable(f"endpoint {config.name!r}: {exc}; the run was not started and "
                                  "nothing was recorded") from None
    if proxy is not None:
        shown, host, port = _origin(proxy.url)
        reason = _connect(host, port, config)
        if reason is None:
            return
        raise EndpointUnreachable(f"the proxy {shown} of endpoint {config.name!r} ({proxy.source}) "
                                  f"is unreachable: {reason}; the run was not started and nothing "
                                  "was recorded")
    shown, host, port = _origin(config.base_url)
    reason = _connect(host, port, config)
    if reason is None:
        return
    hint = scheme_hint(config.url_for("chat/completions"), config.proxy)
    raise EndpointUnreachable(f"endpoint {config.name!r} at {shown} is unreachable: {reason}{hint}; "
                              "the run was not started and nothing was recorded")


def unreachable(config: EndpointConfig, seconds: float = CONNECT_SECONDS) -> tuple[str, str] | None:
    """(the address shown, why) when nothing accepts a connection within ``seconds`` where the
    endpoint's calls go (its proxy when it has one); None when something does (``endpoints add``)."""
    try:
        proxy = proxy_for(config.url_for("chat/completions"), config.proxy)
    except ProxyError as exc:
        return _origin(config.base_url)[0], str(exc)
    shown, host, port = _origin(proxy.url if proxy is not None else config.base_url)
    reason = _connect(host, port, config, seconds)
    if reason is None:
        return None
    if proxy is None:
        reason += scheme_hint(config.url_for("chat/completions"), config.proxy)
    return (f"its proxy {shown}" if proxy is not None else shown), reason


def _connect(host: str, port: int, config: EndpointConfig, seconds: float = CONNECT_SECONDS) -> str | None:
    """None when ``host:port`` accepts a TCP connection, else why not, in words."""
    wait = min(seconds, config.timeout)
    try:
        with socket.create_connection((host, port), timeout=wait):
            return None
    except socket.gaierror as exc:
        reason = f"cannot resolve the host {host!r} ({exc.strerror or exc})"
    except TimeoutError:
        reason = f"no answer within {wait:g} s"
    except ConnectionRefusedError:
        reason = "connection refused (is the server running?)"
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
    return reason
