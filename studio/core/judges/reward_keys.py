"""Which key an ``external_endpoint`` grader may send, and to where: the user decides, not the file.

A grader file is code from someone else. If its ``api_key_env`` field chose the variable, a file
saying ``api_key_env: AWS_SECRET_ACCESS_KEY`` and ``url: https://anyone.example`` would mail that
secret out. So the field is only a request: the key comes from a library endpoint the *user*
configured (keyring, or an environment variable they bound with ``endpoints add --api-key-env``)
whose base URL is the grader's URL or a parent path of it on the same origin. No such endpoint:
nothing is sent, and each sample's error says exactly what to bind and where it would go.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from sqlalchemy import Engine

from studio.core.errors import StudioError
from studio.core.models import ExternalEndpoint, GraderDefinition
from studio.core.models.endpoints import EndpointConfig
from studio.core.store.endpoints import EndpointRepository

from .http.credentials import resolve_api_key

if TYPE_CHECKING:
    from studio.core.store.library import Library


def _origin_and_path(url: str) -> tuple[tuple[str, str, int | None], str]:
    parts = urlsplit(url.strip())
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return (parts.scheme.lower(), (parts.hostname or "").lower(), port), parts.path.rstrip("/")


def covers(base_url: str, url: str) -> bool:
    """True when ``url`` is ``base_url`` or below it, on the same scheme, host and port."""
    base_origin, base_path = _origin_and_path(base_url)
    origin, path = _origin_and_path(url)
    if base_origin != origin:
        return False
    return path == base_path or path.startswith(base_path + "/") or not base_path


def bound_endpoint(library: Library | Engine, url: str) -> EndpointConfig | None:
    """The user's endpoint for ``url`` (the most specific base URL wins), or None."""
    matches = [c for c in EndpointRepository.of(library).list() if covers(c.base_url, url)]
    if not matches:
        return None
    return max(matches, key=lambda c: len(_origin_and_path(c.base_url)[1]))


def bind_hint(grader: ExternalEndpoint) -> str:
    """The sentence that tells the user which secret the file asks for and where it would go."""
    var = grader.api_key_env or "VAR"
    return (
        f"grader {grader.key!r} asks for a key (its file names ${var}) to be sent to {grader.url}; "
        "a grader file cannot choose a secret, so nothing is sent until you bind one to that URL: "
        f"`grader-studio endpoints add NAME --base-url {grader.url} --model reward-server "
        f"--api-key-env {var}` (or --api-key-stdin for the keyring)"
    )


def reward_key(
    grader: ExternalEndpoint, library: Library | Engine | None
) -> tuple[str | None, str | None]:
    """(key to send, None) or (None, the sentence a sample fails with)."""
    bound = bound_endpoint(library, grader.url) if library is not None else None
    if bound is not None:
        try:
            key = resolve_api_key(bound)
        except StudioError as exc:  # not approved here, or a variable the user does not allow
            return None, f"grader {grader.key!r}: {exc}"
        if key or not grader.api_key_env:
            return key, None
        return None, (
            f"grader {grader.key!r} needs a key for {grader.url}; endpoint {bound.name!r} covers "
            "that URL but has no key (set its environment variable or store one in the keyring)"
        )
    if grader.api_key_env:
        return None, bind_hint(grader)
    return None, None


def secret_requests(
    graders: Iterable[GraderDefinition], library: Library | Engine | None = None
) -> list[str]:
    """A sentence per imported grader that names a secret no endpoint of the library answers."""
    said = []
    for grader in graders:
        # an imported definition (an outside value) narrowed at its boundary: only a reward server names a secret
        if isinstance(grader, ExternalEndpoint) and grader.api_key_env:
            if library is not None and bound_endpoint(library, grader.url) is not None:
                continue
            said.append(bind_hint(grader))
    return said
