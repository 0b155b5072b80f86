"""Named judge endpoints: how to reach a model server, and how hard we may push it.

Secrets are deliberately absent: ``api_key_env`` names an environment variable, and the keyring
holds keys by endpoint name (see ``credentials``). A config can therefore be stored, exported and
logged as it is.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal, Protocol, cast
from urllib.parse import SplitResult, urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

#: how a server takes an exact JSON schema (found by the endpoint probe; see judges/http/structured.py)
StructuredOutput = Literal["json_schema", "json_object_schema", "json_object", "none"]

#: an endpoint's kind names its provider: a module of the provider registry, reached by name at
#: validation time (it sits above the models): openai (any OpenAI-compatible server), azure (Azure
#: OpenAI: ``model`` is the deployment, ``api_version`` required), anthropic, or one a package adds
PROVIDER_REGISTRY = "studio.core.judges.http.providers"
EndpointKind = str


class _ProviderRegistry(Protocol):
    """What an endpoint reads of the provider registry module (``judges/http/providers``)."""

    UnknownProvider: type[Exception]

    def get_provider(self, name: str) -> ProviderRules: ...

    def providers(self) -> Mapping[str, ProviderRules]: ...


def _providers() -> _ProviderRegistry:
    # a module reached by name is a ModuleType to mypy; judges/http/providers defines these names
    # and its Provider has ProviderRules' fields
    return cast(_ProviderRegistry, importlib.import_module(PROVIDER_REGISTRY))

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

#: an Azure deployment name as Azure allows it (letters, digits, ``-``, ``_``, ``.``), never ``.``
#: or ``..`` alone: it is a segment of the URL path, so a name must not be able to leave it
_DEPLOYMENT = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,64}$")


def deployment_problem(name: str) -> str | None:
    """Why ``name`` cannot be an Azure deployment (it would change the URL's path), or None."""
    if _DEPLOYMENT.match(name):
        return None
    return (f"the Azure deployment name {name!r} is not one: a deployment is 1 to 64 letters, digits, "
            "'-', '_' or '.' (and not '.' or '..'), since it is a segment of the URL path")


def _no_login(parts: SplitResult, what: str, instead: str) -> None:
    """Every URL an endpoint stores: no login in it (the library is no place for a secret, and a
    teammate can read it), and a port that is a number."""
    if "@" in parts.netloc:
        raise ValueError(f"the {what} holds credentials, which the library never stores: {instead}")
    try:
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError:
        raise ValueError(f"the {what}'s port is not a number") from None


@dataclass(frozen=True)
class EndpointOrigin:
    """Where a config was read from: a library row (a teammate's data, on a shared library), not the
    user's own input. The key is sent to such a config only once the user approved where it goes
    (store/endpoint_trust.py); a config built in this process from the user's input has none."""

    #: the library's identity (its file, or its server and database; never a password)
    library: str
    #: a shared (PostgreSQL) library, where another analyst can write rows
    shared: bool
    updated_by: str
    updated_at: datetime | None


class ProviderRules(Protocol):
    """What an endpoint's own checks and URL read of its provider (``judges/http/providers``, reached
    by name: the provider registry sits above the models)."""

    name: str
    api_version: bool
    model_word: str

    def model_problem(self, model: str) -> str | None: ...

    def url_for(self, config: EndpointConfig, path: str, model: str | None = None) -> str: ...


class EndpointConfig(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    kind: EndpointKind = "openai"
    base_url: str
    model: str
    temperature: float | None = Field(
        default=None, ge=0.0, le=2.0, description="None = the judge's"
    )
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=8, ge=1, le=1024)
    requests_per_minute: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    retry_backoff: float = Field(default=0.5, ge=0.0, le=60.0, description="first retry delay, s")
    embedding_model: str | None = Field(default=None, description="for ctx.embeddings_create")
    api_key_env: str | None = None
    supports_logprobs: bool | None = Field(default=None, description="None = not yet detected")
    structured_output: StructuredOutput | None = Field(
        default=None, description="how to ask for a JSON schema; None = not yet detected"
    )
    label: str = Field(default="", description="Shown next to the name, e.g. 'scripted judge'")
    #: Azure OpenAI's ``api-version`` query parameter (kind azure only)
    api_version: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._-]{1,40}$")
    #: this endpoint's proxy, winning over HTTPS_PROXY/HTTP_PROXY/ALL_PROXY (judges/http/proxies.py);
    #: never with credentials (those stay in the environment)
    proxy: str | None = None
    #: a PEM file of extra CAs this endpoint trusts (a company root), on top of the base store
    ca_bundle: str | None = None
    #: prices in USD per million tokens, kept as exact decimals (engine/usage.py multiplies them
    #: out exactly and rounds only for display); None = unknown, so no cost is shown
    price_input: Decimal | None = Field(default=None, ge=0, description="USD per 1M prompt tokens")
    price_output: Decimal | None = Field(default=None, ge=0, description="USD per 1M completion tokens")
    #: what a prompt token served from the endpoint's prompt cache costs (providers bill them at a
    #: fraction of the input price); None = the input price, so an unknown discount never lowers a cost
    price_cached_input: Decimal | None = Field(
        default=None, ge=0, description="USD per 1M cached prompt tokens (None: the input price)"
    )
    #: set by the library's repository on what it reads (kept by ``model_copy``); never stored
    _origin: EndpointOrigin | None = PrivateAttr(default=None)

    @property
    def origin(self) -> EndpointOrigin | None:
        return self._origin

    def from_library(self, origin: EndpointOrigin) -> EndpointConfig:
        """This config marked as read from a library row (see ``EndpointOrigin``)."""
        self._origin = origin
        return self

    def __eq__(self, other: object) -> bool:
        """Equal settings are equal configs, wherever each was read from (pydantic would compare
        the origin too)."""
        if not isinstance(other, EndpointConfig):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    @property
    def cached_input_price(self) -> Decimal | None:
        """What a cached prompt token costs: its own price where set, else the input price."""
        return self.price_input if self.price_cached_input is None else self.price_cached_input

    @property
    def rules(self) -> ProviderRules:
        """What this endpoint's provider asks of its settings and URL (the whole descriptor, with its
        requests and answers, is ``judges.http.providers.provider_of``)."""
        return _providers().get_provider(self.kind)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        registry = _providers()
        try:
            registry.get_provider(value)
        except registry.UnknownProvider as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        parts = urlsplit(value)
        _no_login(parts, "base URL", "give the URL without USER:PASSWORD@ and the key with "
                                     "--api-key-env or --api-key-stdin (the keyring)")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base URL must start with http:// or https://, got {value!r}")
        if not parts.hostname:
            raise ValueError(f"the base URL names no host, got {value!r}")
        if "#" in value:
            raise ValueError("the base URL cannot hold a '#' fragment")
        return value

    @field_validator("proxy")
    @classmethod
    def _check_proxy(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().rstrip("/")
        parts = urlsplit(value if "://" in value else f"http://{value}")
        if parts.scheme.lower() not in ("http", "https"):
            raise ValueError(f"the proxy must be an http:// or https:// URL, got a {parts.scheme}:// one")
        _no_login(parts, "proxy URL", "give the proxy without them here and put "
                                      "http://USER:PASSWORD@HOST:PORT in HTTPS_PROXY (or HTTP_PROXY) in "
                                      "the environment instead")
        if not parts.hostname or parts.path not in ("", "/") or parts.query:
            raise ValueError(f"the proxy must be a URL like http://HOST:PORT, got {value!r}")
        return f"{parts.scheme.lower()}://{parts.netloc}"

    @model_validator(mode="after")
    def _check_provider(self) -> EndpointConfig:
        """What the provider needs of its settings: an ``api_version`` where it takes one (and only
        there), a model its URL can carry."""
        provider = self.rules
        if provider.api_version and not self.api_version:
            raise ValueError(f"an {self.kind} endpoint needs its api_version (e.g. --api-version 2024-10-21)")
        if not provider.api_version and self.api_version:
            takers = [p.name for p in _providers().providers().values() if p.api_version]
            raise ValueError(f"api_version is for {' and '.join(takers)} endpoints only")
        if problem := provider.model_problem(self.model):
            raise ValueError(problem)
        return self

    def url_for(self, path: str, model: str | None = None) -> str:
        """Full URL of an API path, as the provider builds it (OpenAI-style base URLs already end
        in /v1; Azure's is the deployment's, ``model`` else the endpoint's, with its api-version)."""
        return self.rules.url_for(self, path, model)
