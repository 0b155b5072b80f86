"""The endpoint-provider descriptor and the registry that finds every provider: one module per
provider (``openai``, ``azure``, ``anthropic``) declaring ``PROVIDER = ...``.

A provider says how a judge call becomes its API's request (path, JSON body, auth header, URL),
how its answer is read (text, logprobs, token usage), and what its settings need (a deployment, an
``api_version``). ``EndpointConfig.kind`` names one; the client, the endpoint probe, the dry run,
the endpoint trust record, the CLI and the window ask the descriptor instead of testing the name.

Providers are found in this package and in any module an installed distribution names under the
``grader_studio.providers`` entry-point group: a provider shipped outside the studio is one module.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from studio.core.judges.http.chat import ChatRequest, ChatResponse
    from studio.core.models.endpoints import EndpointConfig

#: the entry-point group naming further provider modules
ENTRY_POINT_GROUP = "grader_studio.providers"


class UnknownProvider(StudioError, ValueError):
    """An endpoint kind no provider module declares."""


class Provider:
    """What an endpoint provider declares about itself, once, in its own module.

    Subclasses set the class attributes and implement ``payload``, ``headers`` and ``parse``; the
    defaults are those of a plain HTTP API under the endpoint's base URL.
    """

    #: the endpoint kind (``EndpointConfig.kind``) and what the window calls it
    name: str = ""
    label: str = ""
    #: the chat call's path under the base URL
    path: str = "chat/completions"
    #: what the endpoint's ``model`` names on this provider ("model", Azure's "deployment")
    model_word: str = "model"
    #: the endpoint needs an ``api_version`` (and only such providers take one)
    api_version: bool = False
    #: the API returns token logprobs when asked (range judges read their scores from them)
    logprobs: bool = False
    #: the API takes a JSON schema for the answer (the probe tries its dialects)
    structured: bool = False
    #: the hosts of the provider's own API, whose every answer counts its tokens
    counting_hosts: tuple[str, ...] = ()
    #: its model names are OpenAI's, so OpenAI's tokenizer counts a prompt exactly (else estimated)
    openai_encodings: bool = False
    #: the provider id promptfoo's config names (``<id>:<model>``)
    promptfoo_id: str = "openai:chat"
    #: Inspect's model prefix for it (``<prefix>/<model>``); None: Inspect's generic OpenAI-compatible one
    inspect_prefix: str | None = None

    def payload(self, config: EndpointConfig, model: str, request: ChatRequest) -> JsonObject:
        raise NotImplementedError

    def headers(self, api_key: str | None) -> dict[str, str]:
        raise NotImplementedError

    def parse(self, body: JsonValue) -> ChatResponse:
        raise NotImplementedError

    def url_for(self, config: EndpointConfig, path: str, model: str | None = None) -> str:
        """Full URL of an API path (OpenAI-style base URLs already end in /v1)."""
        return f"{config.base_url}/{path.lstrip('/')}"

    def model_problem(self, model: str) -> str | None:
        """Why ``model`` cannot be used on this provider (it would change the URL), or None."""
        return None

    def answer(self, text: str, logprobs: bool) -> JsonObject:
        """An answer body of this API holding ``text`` (the dry run's stand-in for a call), read back
        by ``parse``."""
        raise NotImplementedError


def _declared(module: ModuleType, found: dict[str, Provider]) -> None:
    provider = getattr(module, "PROVIDER", None)
    if isinstance(provider, Provider):
        if provider.name in found and found[provider.name] is not provider:
            raise TypeError(f"endpoint provider {provider.name!r} is declared twice")
        found[provider.name] = provider


@cache
def providers() -> dict[str, Provider]:
    """Every endpoint provider by name: this package's modules, then the entry point's."""
    import importlib.metadata

    found: dict[str, Provider] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            _declared(importlib.import_module(f"{__name__}.{info.name}"), found)
    for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.value):
        _declared(importlib.import_module(ep.value.split(":")[0].strip()), found)
    return found


@cache
def _named(name: str) -> Provider | None:
    """The studio's own module named after ``name``, when there is one (no scan, no metadata)."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        return None
    provider = getattr(module, "PROVIDER", None)
    return provider if isinstance(provider, Provider) and provider.name == name else None


def get_provider(name: str) -> Provider:
    """One provider's descriptor; an unknown name is refused with the known ones."""
    found = _named(name) if isinstance(name, str) else None
    if found is not None:
        return found
    try:
        return providers()[name]
    except (KeyError, TypeError):
        raise UnknownProvider(f"unknown endpoint kind {name!r}; the kinds are {', '.join(providers())}") from None


def provider_of(config: EndpointConfig) -> Provider:
    """The provider an endpoint's kind names (its request, answer, URL and auth header)."""
    return get_provider(config.kind)


def provider_names() -> list[str]:
    """The endpoint kinds, for the CLI's choices and the window's list."""
    return list(providers())
