"""The endpoint-provider registry: each endpoint kind is one module whose descriptor builds the
request (path, URL, auth header), reads the answer and says what its settings need."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from studio.core.judges.http.chat import ChatRequest, user
from studio.core.judges.http.providers import (
    UnknownProvider,
    get_provider,
    provider_names,
    provider_of,
)
from studio.core.models.endpoints import EndpointConfig


def test_the_studio_s_providers_are_found_by_name() -> None:
    assert {"openai", "azure", "anthropic"} <= set(provider_names())
    with pytest.raises(UnknownProvider, match="unknown endpoint kind 'gemini'; the kinds are"):
        get_provider("gemini")


def test_an_endpoint_of_an_unknown_kind_is_refused_naming_the_kinds() -> None:
    with pytest.raises(ValidationError, match="unknown endpoint kind 'azur'"):
        EndpointConfig(name="x", kind="azur", base_url="https://example.test/v1", model="m")


@pytest.mark.parametrize(("kind", "extra", "url", "header"), [
    ("openai", {}, "https://h.test/v1/chat/completions", {"Authorization": "Bearer k"}),
    ("azure", {"api_version": "2024-10-21"},
     "https://h.test/openai/deployments/m/chat/completions?api-version=2024-10-21", {"api-key": "k"}),
    ("anthropic", {}, "https://h.test/v1/messages", {"x-api-key": "k", "anthropic-version": "2023-06-01"}),
])
def test_each_provider_builds_its_own_url_and_auth_header(kind: str, extra: dict, url: str, header: dict) -> None:
    base = "https://h.test" if kind != "openai" else "https://h.test/v1"
    config = EndpointConfig(name="x", kind=kind, base_url=base, model="m", **extra)
    provider = provider_of(config)
    assert config.url_for(provider.path) == url
    assert provider.headers("k") == header
    body = provider.payload(config, "m", ChatRequest(messages=[user("hi")]))
    assert body["model"] == "m" and provider.parse(provider.answer("PASS", False)).text == "PASS"


def test_what_a_provider_needs_of_its_settings_is_its_own() -> None:
    with pytest.raises(ValidationError, match="an azure endpoint needs its api_version"):
        EndpointConfig(name="x", kind="azure", base_url="https://h.test", model="m")
    with pytest.raises(ValidationError, match="api_version is for azure endpoints only"):
        EndpointConfig(name="x", kind="anthropic", base_url="https://h.test", model="m", api_version="1")
    with pytest.raises(ValidationError, match="is not one"):
        EndpointConfig(name="x", kind="azure", base_url="https://h.test", model="../x", api_version="1")
    assert get_provider("azure").model_word == "deployment" and get_provider("openai").model_word == "model"
