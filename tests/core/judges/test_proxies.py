"""Which proxy a judge call takes, read as curl reads it (judges/http/proxies.py)."""

from __future__ import annotations

import pytest

from studio.core.judges.http.proxies import ProxyError, bypassed, proxy_for


def test_the_scheme_variable_then_all_proxy_lower_case_first() -> None:
    env = {"HTTPS_PROXY": "http://upper:3128", "https_proxy": "http://lower:3128",
           "ALL_PROXY": "http://all:8080", "HTTP_PROXY": "plain:8000"}
    assert proxy_for("https://api.example.com/v1", environ=env).url == "http://lower:3128"
    assert proxy_for("https://api.example.com/v1", environ=env).source == "https_proxy"
    assert proxy_for("http://api.example.com/v1", environ=env).url == "http://plain:8000"
    assert proxy_for("https://x.com/", environ={"ALL_PROXY": "https://all:8443"}).url == \
        "https://all:8443"
    assert proxy_for("https://x.com/", environ={}) is None


def test_the_endpoint_proxy_wins_and_no_proxy_still_applies() -> None:
    env = {"HTTPS_PROXY": "http://env:3128", "NO_PROXY": ".internal.corp"}
    assert proxy_for("https://x.com/", "http://mine:3128", env).source == "the endpoint's proxy"
    assert proxy_for("https://llm.internal.corp/v1", "http://mine:3128", env) is None


@pytest.mark.parametrize(("host", "entries", "direct"), [
    ("api.example.com", "example.com", True),
    ("api.example.com", ".example.com", True),
    ("example.com", ".example.com", True),
    ("badexample.com", "example.com", False),
    ("api.example.com", "*.example.com", True),
    ("10.1.2.3", "10.0.0.0/8", True),
    ("10.1.2.3", "10.1.2.3", True),
    ("11.1.2.3", "10.0.0.0/8", False),
    ("::1", "::1", True),
    ("::1", "[::1]:8080", True),
    ("::1", "[::1]", True),
    ("10.0.0.1", "10.0.0.1:8080", True),
    ("anything", "*", True),
    ("host.corp", "other.corp:8080, host.corp:443", True),
    ("host.corp", "", False),
])
def test_no_proxy_hosts_suffixes_addresses_and_star(host: str, entries: str, direct: bool) -> None:
    assert bypassed(host, entries) is direct


def test_credentials_are_kept_apart_and_never_shown() -> None:
    proxy = proxy_for("https://x.com/", environ={"https_proxy": "http://me:p%40ss@proxy:3128"})
    assert proxy is not None
    assert (proxy.username, proxy.password, proxy.url) == ("me", "p@ss", "http://proxy:3128")
    assert "p@ss" not in proxy.shown and "me" not in proxy.shown.split(" from ")[0]


def test_a_socks_proxy_is_refused_in_words() -> None:
    with pytest.raises(ProxyError, match="speaks to http:// and https:// proxies only"):
        proxy_for("https://x.com/", environ={"ALL_PROXY": "socks5://proxy:1080"})


def test_loopback_never_takes_the_environment_proxy_only_the_endpoints() -> None:
    env = {"HTTP_PROXY": "http://corp:3128", "HTTPS_PROXY": "http://corp:3128"}
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:8080/v1", "https://[::1]:8443/v1"):
        assert proxy_for(url, environ=env) is None
    assert proxy_for("http://127.0.0.1:8080/v1", "http://mine:3128", env).url == "http://mine:3128"


def test_an_endpoint_without_network_options_is_stored_as_before(library) -> None:
    """A library whose endpoints use no proxy, CA bundle or api-version stays readable by the
    version before them (its endpoint model forbids fields it does not know)."""
    import json

    from sqlalchemy import select

    from studio.core.models.endpoints import EndpointConfig
    from studio.core.store.endpoints import EndpointRepository
    from studio.core.store.tables import endpoints as endpoints_table

    repo = EndpointRepository.of(library)
    repo.save(EndpointConfig(name="plain", base_url="http://127.0.0.1:8080/v1", model="m"))
    repo.save(EndpointConfig(name="routed", base_url="https://x.invalid/v1", model="m",
                             proxy="http://proxy:3128", ca_bundle="/etc/ca.pem"))
    with library.engine.connect() as conn:
        stored = {row.name: json.loads(row.config)
                  for row in conn.execute(select(endpoints_table.c.name, endpoints_table.c.config))}
    assert not {"api_version", "proxy", "ca_bundle"} & set(stored["plain"])
    assert stored["routed"]["proxy"] == "http://proxy:3128"
    assert repo.get("routed").ca_bundle == "/etc/ca.pem" and repo.get("plain").proxy is None
