"""Judges reached the ways analysts' networks allow (issue 34), and the network tests' servers
(the desync server's test is tests/hostile/test_keepalive_desync.py).

Every server is real and on 127.0.0.1 (``net_servers``): a judge that names each sample in its
answer, a forward proxy that is the only way to the judge's host name (``judge.invalid`` resolves
nowhere), a TLS judge signed by a CA made in the test, an Azure OpenAI look-alike.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from judge_helpers import library_bytes, qa, without_proxy_variables
from net_servers import (
    JudgeLog,
    ProxyLog,
    ThreadServer,
    forward_proxy,
    make_ca,
    naming_judge,
    read_request,
)

from studio.cli import main
from studio.core.engine.preflight import EndpointUnreachable, check_reachable
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.probe import probe_endpoint
from studio.core.judges.http.transport import USER_AGENT
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the proxy variables it means; none leak in from the machine."""
    without_proxy_variables(monkeypatch)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def save_endpoint(library: Library, base_url: str, **fields: object) -> EndpointConfig:
    values: dict[str, object] = {"name": "judge", "base_url": base_url, "model": "judge",
                                 "retry_backoff": 0.01, "timeout": 10.0, "max_concurrency": 8}
    values.update(fields)
    config = EndpointConfig(**values)  # type: ignore[arg-type]
    EndpointRepository.of(library).save(config)
    return config


def run_named(library: Library, count: int, concurrency: int = 8) -> list[dict]:
    """A binary judge over ``count`` samples, each completion naming its sample; the stored rows."""
    if "named" not in {g.key for g in library.graders.list()}:
        library.graders.create(BinaryJudge(key="named", criteria="c", endpoint="judge"))
    name = f"d{count}-{len(library.datasets.list())}"
    library.datasets.create(name, [qa(f"s{i:03d}", "q", f"answer for SAMPLE-s{i:03d}")
                                   for i in range(count)])
    run = run_grader(library, "named", name, RunOptions(concurrency=concurrency, use_cache=False))
    return library.runs.results(run.id)


def assert_on_own_samples(rows: list[dict]) -> None:
    for row in rows:
        assert row["status"] == "ok", row["error"]
        assert f"SAMPLE-{row['sample_id']} " in row["rationale"] + " ", (row["sample_id"],
                                                                         row["rationale"])


# --- proxies ---------------------------------------------------------------------------------------


def test_a_judge_reached_only_through_a_forward_proxy_from_the_environment(
    library, monkeypatch, db_path, capsys
) -> None:
    judge_log, proxy_log = JudgeLog(), ProxyLog()
    secret = "pr0xy-s3cret"
    need = "Basic " + base64.b64encode(f"analyst:{secret}".encode()).decode()
    with ThreadServer(naming_judge(judge_log)) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"judge.invalid": judge.port}, need)) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://analyst:{secret}@127.0.0.1:{proxy.port}")
        save_endpoint(library, "http://judge.invalid/v1")
        rows = run_named(library, 6)
        assert_on_own_samples(rows)
        assert proxy_log.lines and all(
            line == "POST http://judge.invalid/v1/chat/completions HTTP/1.1"
            for line in proxy_log.lines)
        assert set(proxy_log.authorizations) == {need}
        # the judge saw the request without the proxy's credentials
        assert all("proxy-authorization" not in headers for _, headers in judge_log.requests)

        # `endpoints test` says which proxy it used, never the credentials
        assert main(["--db", str(db_path), "endpoints", "test", "judge"]) == 0
        out = capsys.readouterr().out
        assert f"route: through the proxy http://127.0.0.1:{proxy.port} from HTTP_PROXY " \
               "(with credentials)" in out
        assert secret not in out
    stored = library_bytes(db_path)
    assert secret.encode() not in stored


def test_the_endpoint_proxy_wins_over_the_environment_and_no_proxy_goes_direct(
    library, monkeypatch
) -> None:
    proxy_log = ProxyLog()
    with ThreadServer(naming_judge(JudgeLog())) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"judge.invalid": judge.port})) as proxy:
        # the environment names a proxy that is not there: the endpoint's own wins
        monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
        monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
        save_endpoint(library, "http://judge.invalid/v1", proxy=f"http://127.0.0.1:{proxy.port}")
        assert_on_own_samples(run_named(library, 3))
        assert len(proxy_log.lines) == 3

        # no_proxy sends the judge's address direct, past both proxies
        monkeypatch.setenv("NO_PROXY", "example.com, 127.0.0.0/8")
        save_endpoint(library, f"http://127.0.0.1:{judge.port}/v1",
                      proxy=f"http://127.0.0.1:{proxy.port}")
        assert_on_own_samples(run_named(library, 3))
        assert len(proxy_log.lines) == 3


def test_a_proxy_that_is_down_is_said_in_words_before_the_run(library, monkeypatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://user:hidden@127.0.0.1:9")
    config = save_endpoint(library, "https://judge.invalid/v1")
    with pytest.raises(EndpointUnreachable) as caught:
        check_reachable(config)
    said = str(caught.value)
    assert "the proxy http://127.0.0.1:9 of endpoint 'judge' (HTTPS_PROXY) is unreachable" in said
    assert "connection refused" in said and "hidden" not in said


# --- TLS through CONNECT, with a company CA ----------------------------------------------------------


def test_a_tls_judge_through_connect_trusts_the_ca_bundle_and_nothing_looser(
    library, tmp_path: Path, db_path, capsys
) -> None:
    ca = make_ca(tmp_path / "ca", "judge.invalid")
    proxy_log = ProxyLog()
    with ThreadServer(naming_judge(JudgeLog()), tls=ca.server_context()) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"judge.invalid": judge.port})) as proxy:
        proxy_url = f"http://127.0.0.1:{proxy.port}"
        # without the company CA the certificate is not trusted, and that is said in words
        save_endpoint(library, "https://judge.invalid/v1", proxy=proxy_url, max_retries=0)
        [row] = run_named(library, 1)
        assert row["status"] == "error"
        assert "TLS certificate of judge.invalid:443 is not trusted" in row["error"]
        assert "--ca-bundle" in row["error"]

        # given with --ca-bundle through the CLI, the same endpoint works, through CONNECT only
        assert main(["--db", str(db_path), "endpoints", "add", "judge", "--replace",
                     "--base-url", "https://judge.invalid/v1", "--model", "judge",
                     "--proxy", proxy_url, "--ca-bundle", str(ca.ca_pem)]) == 0
        assert "also trusting the CAs in" in capsys.readouterr().out
        assert_on_own_samples(run_named(library, 4))
        assert proxy_log.lines and all(line == "CONNECT judge.invalid:443 HTTP/1.1"
                                       for line in proxy_log.lines)


def test_ssl_cert_file_replaces_the_base_store(library, tmp_path: Path, monkeypatch) -> None:
    ca = make_ca(tmp_path / "ca", "127.0.0.1")
    with ThreadServer(naming_judge(JudgeLog()), tls=ca.server_context()) as judge:
        monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_pem))
        save_endpoint(library, f"https://127.0.0.1:{judge.port}/v1")
        assert_on_own_samples(run_named(library, 2))


def test_a_proxy_url_with_credentials_is_never_stored(db_path, capsys) -> None:
    code = main(["--db", str(db_path), "endpoints", "add", "j", "--base-url", "https://x.invalid/v1",
                 "--model", "m", "--proxy", "http://me:pa55word@proxy.corp:3128"])
    captured = capsys.readouterr()
    assert code != 0 and "never stores" in captured.err and "pa55word" not in captured.err
    stored = library_bytes(db_path)
    assert b"pa55word" not in stored


# --- Azure OpenAI ------------------------------------------------------------------------------------


def test_an_azure_endpoint_calls_its_deployment_with_the_api_key_header(
    library, db_path, monkeypatch, capsys
) -> None:
    key = "azure-KEY-5d1f0c"
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", key)
    log = JudgeLog()

    def check(line: str, headers: dict[str, str]) -> str | None:
        if line != ("POST /openai/deployments/grader-gpt4o/chat/completions"
                    "?api-version=2024-10-21 HTTP/1.1"):
            return f"unexpected request line {line}"
        if headers.get("api-key") != key or "authorization" in headers:
            return "no api-key header"
        return None

    with ThreadServer(naming_judge(log, check=check)) as azure:
        base = f"http://127.0.0.1:{azure.port}"
        assert main(["--db", str(db_path), "endpoints", "add", "judge", "--kind", "azure",
                     "--base-url", base, "--model", "grader-gpt4o", "--api-version", "2024-10-21",
                     "--api-key-env", "AZURE_OPENAI_API_KEY"]) == 0
        assert main(["--db", str(db_path), "endpoints", "test", "judge"]) == 0
        out = capsys.readouterr().out
        assert "route: direct connection (no proxy)" in out
        assert "structured output: json_schema" in out  # probed as for OpenAI
        assert_on_own_samples(run_named(library, 3))
    assert log.requests and key not in out


def test_azure_needs_its_api_version() -> None:
    with pytest.raises(ValueError, match="api_version"):
        EndpointConfig(name="a", kind="azure", base_url="https://r.openai.azure.com", model="d")


# --- a polite client -----------------------------------------------------------------------------


def test_user_agent_and_gzip_are_sent(library) -> None:
    log = JudgeLog()
    with ThreadServer(naming_judge(log)) as judge:
        save_endpoint(library, f"http://127.0.0.1:{judge.port}/v1")
        assert_on_own_samples(run_named(library, 1))
    [(_, headers)] = log.requests
    assert headers["user-agent"] == USER_AGENT and USER_AGENT.startswith("grader-studio/")
    assert headers["accept-encoding"] == "gzip"


def test_a_gzip_bomb_is_refused_with_a_sentence(library) -> None:
    bomb = gzip.compress(b"0" * (20 * 1024 * 1024), compresslevel=9)

    async def handler(reader, writer) -> None:
        while await read_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
                         % len(bomb) + bomb)
            await writer.drain()

    with ThreadServer(handler) as judge:
        save_endpoint(library, f"http://127.0.0.1:{judge.port}/v1", max_retries=0)
        [row] = run_named(library, 1)
    assert len(bomb) < 100_000
    assert row["status"] == "error"
    assert "gzip answer expands past 16 MiB" in row["error"]


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(library, monkeypatch, status: int) -> None:
    waits: list[float] = []

    async def recorded(self, seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(JudgeClient, "_sleep", recorded)
    calls = []

    async def handler(reader, writer) -> None:
        while (request := await read_request(reader)) is not None:
            calls.append(request)
            if len(calls) == 1:
                writer.write(b"HTTP/1.1 %d Busy\r\nRetry-After: 7\r\nContent-Length: 2\r\n\r\n{}"
                             % status)
            else:
                body = json.dumps({"choices": [{"message": {"content": json.dumps(
                    {"reasoning": "SAMPLE-s000 fine", "verdict": "PASS"})}}]}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()

    with ThreadServer(handler) as judge:
        save_endpoint(library, f"http://127.0.0.1:{judge.port}/v1")
        [row] = run_named(library, 1, concurrency=1)
    assert row["status"] == "ok" and len(calls) == 2
    assert waits == [7.0]


# --- issue 33 item 12: a wrong URL said in words ------------------------------------------------


def test_a_test_on_a_wrong_port_says_connection_refused_in_words() -> None:
    import asyncio

    config = EndpointConfig(name="wrong", base_url="http://127.0.0.1:9/v1", model="m",
                            retry_backoff=0.01)
    with pytest.raises(Exception) as caught:
        asyncio.run(probe_endpoint(config))
    said = str(caught.value)
    assert "cannot connect to 127.0.0.1:9: connection refused (is the server running" in said
    assert "Errno" not in said and "ConnectionRefusedError" not in said
    assert "route: direct connection (no proxy)" in said


def test_proxy_credentials_go_on_the_connect_and_never_into_the_tunnel(
    library, tmp_path: Path, monkeypatch
) -> None:
    ca = make_ca(tmp_path / "ca", "judge.invalid")
    judge_log, proxy_log = JudgeLog(), ProxyLog()
    need = "Basic " + base64.b64encode(b"analyst:tunnel-s3cret").decode()
    with ThreadServer(naming_judge(judge_log), tls=ca.server_context()) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"judge.invalid": judge.port}, need)) as proxy:
        monkeypatch.setenv("https_proxy", f"http://analyst:tunnel-s3cret@127.0.0.1:{proxy.port}")
        save_endpoint(library, "https://judge.invalid/v1", ca_bundle=str(ca.ca_pem))
        assert_on_own_samples(run_named(library, 3))
    assert proxy_log.lines and all(line.startswith("CONNECT judge.invalid:443 ")
                                   for line in proxy_log.lines)
    assert set(proxy_log.authorizations) == {need}
    # inside the tunnel, the judge saw no proxy credentials
    assert judge_log.requests and all("proxy-authorization" not in headers
                                      for _, headers in judge_log.requests)


def test_an_https_proxy_is_verified_with_the_studios_trust_store_for_an_http_endpoint_too(
    library, tmp_path: Path, monkeypatch
) -> None:
    """A plain-http judge behind an https proxy: the proxy's certificate is checked against the
    studio's trust store (here SSL_CERT_FILE, a company CA the system store does not hold), as an
    https endpoint's is, never against another store; an untrusted proxy is refused in words."""
    ca = make_ca(tmp_path / "ca", "127.0.0.1")
    proxy_log = ProxyLog()
    with ThreadServer(naming_judge(JudgeLog())) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"judge.invalid": judge.port}), tls=ca.server_context()) as proxy:
        save_endpoint(library, "http://judge.invalid/v1", proxy=f"https://127.0.0.1:{proxy.port}", max_retries=0)
        [row] = run_named(library, 1)  # the company CA not trusted yet: the proxy is not either
        assert row["status"] == "error", row
        assert f"the TLS certificate of the proxy https://127.0.0.1:{proxy.port} is not trusted" in row["error"]
        assert "SSL_CERT_FILE" in row["error"] and not proxy_log.lines

        monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_pem))
        assert_on_own_samples(run_named(library, 3))
        assert proxy_log.lines and all(line == "POST http://judge.invalid/v1/chat/completions HTTP/1.1"
                                       for line in proxy_log.lines)
