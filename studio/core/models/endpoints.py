"""Named judge endpoints: how to reach a model server, and how hard we may push it.

Secrets are deliberately absent: ``api_key_env`` names an environment variable, and the keyring
holds keys by endpoint name (see ``credentials``). A config can therefore be stored, exported and
logged as it is.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: how a server takes an exact JSON schema (found by the endpoint probe; see judges/http/structured.py)
StructuredOutput = Literal["json_schema", "json_object_schema", "json_object", "none"]

#: openai: any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, OpenRouter);
#: azure: Azure OpenAI (``model`` is the deployment; ``api_version`` is required)
EndpointKind = Literal["openai", "anthropic", "azure"]

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


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

    @property
    def cached_input_price(self) -> Decimal | None:
        """What a cached prompt token costs: its own price where set, else the input price."""
        return self.price_input if self.price_cached_input is None else self.price_cached_input

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base URL must start with http:// or https://, got {value!r}")
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
        if parts.username is not None or parts.password is not None:
            raise ValueError("the proxy URL holds credentials, which the library never stores: give "
                             "the proxy without them here and put http://USER:PASSWORD@HOST:PORT in "
                             "HTTPS_PROXY (or HTTP_PROXY) in the environment instead")
        try:
            parts.port  # noqa: B018 (reading it checks it)
        except ValueError:
            raise ValueError("the proxy's port is not a number") from None
        if not parts.hostname or parts.path not in ("", "/") or parts.query:
            raise ValueError(f"the proxy must be a URL like http://HOST:PORT, got {value!r}")
        return f"{parts.scheme.lower()}://{parts.netloc}"

    @model_validator(mode="after")
    def _check_azure(self) -> EndpointConfig:
        if self.kind == "azure" and not self.api_version:
            raise ValueError("an azure endpoint needs its api_version (e.g. --api-version 2024-10-21)")
        if self.kind != "azure" and self.api_version:
            raise ValueError("api_version is for azure endpoints only")
        return self

    def url_for(self, path: str, model: str | None = None) -> str:
        """Full URL of an API path; OpenAI-style base URLs already end in /v1. Azure's is the
        deployment's (``model``, else the endpoint's) with its api-version."""
        if self.kind == "azure":
            root = self.base_url.removesuffix("/openai")
            deployment = quote(model or self.model, safe="")
            return (f"{root}/openai/deployments/{deployment}/{path.lstrip('/')}"
                    f"?api-version={self.api_version}")
        if self.kind == "anthropic":
            root = self.base_url if self.base_url.endswith("/v1") else f"{self.base_url}/v1"
            return f"{root}/{path.lstrip('/')}"
        return f"{self.base_url}/{path.lstrip('/')}"
