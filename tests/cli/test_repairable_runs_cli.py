"""``run`` as a person repairs it (issues 43 and 45): a refused key or proxy credentials stop the run
with what to fix and exit 2, ``run --resume`` finishes it once fixed, ``--retry-errors`` regrades the
errors; bad arguments, an unset key variable and an empty dataset are one sentence and exit 2 with
no run recorded. The CLI runs in-process (``main``) against real servers on 127.0.0.1."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from judge_helpers import add_endpoint, qa, without_proxy_variables
from net_servers import JudgeLog, ProxyLog, ThreadServer, forward_proxy, naming_judge

from studio.cli import main
from studio.core.engine.preflight import EndpointUnreachable, check_reachable
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library

KEY_VAR = "REPAIR_CLI_API_KEY"


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the proxy variables it means; none leak in from the machine."""
    without_proxy_variables(monkeypatch)


def cli(db_path: Path, *args: str) -> int:
    return main(["--db", str(db_path), *args])


@pytest.fixture
def judged(db_path: Path, fake_judge, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    """A library with a binary judge on the scripted judge, which wants the key ``right-key``."""
    fake_judge.required_key = "right-key"
    monkeypatch.setenv(KEY_VAR, "wrong-key")
    with Library.open(db_path) as lib:
        add_endpoint(lib, fake_judge, api_key_env=KEY_VAR)
        lib.graders.create(BinaryJudge(key="judge", criteria="Names the right capital.", endpoint="fake"))
        lib.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris", "Paris") for i in range(60)])
        lib.datasets.create("empty", [])
    return db_path


def runs_of(db_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:  # type: ignore[type-arg]
    assert cli(db_path, "runs", "list", "--json") == 0
    return json.loads(capsys.readouterr().out)


def test_a_wrong_key_stops_the_run_says_to_fix_the_key_and_resume_completes_it(
        judged: Path, fake_judge, capsys, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    assert cli(judged, "run", "judge", "geo", "--no-cache") == 2
    out, err = capsys.readouterr()
    assert "run 1: stopped" in out and "samples 0/60" in out
    assert f"refused the key in {KEY_VAR} (HTTP 401" in out + err and "fix the grader" not in out + err
    assert f"set {KEY_VAR} to a valid key" in err and "grader-studio run --resume 1" in err
    assert "wrong-key" not in out + err
    assert cli(judged, "run", "--resume", "1", "--json") == 2  # still wrong: stopped again, nothing lost
    assert json.loads(capsys.readouterr().out)["status"] == "stopped"
    monkeypatch.delenv(KEY_VAR)  # a resume says an unset variable before its first call, too
    calls = fake_judge.requests["/v1/chat/completions"]
    assert cli(judged, "run", "--resume", "1") == 2
    err = capsys.readouterr().err
    assert f"{KEY_VAR}, which is not set" in err and "run 1 was not resumed and nothing was graded" in err
    assert fake_judge.requests["/v1/chat/completions"] == calls
    assert cli(judged, "runs", "report", "1") == 2  # reading the run calls nothing: no key needed
    assert "the run ended stopped" in capsys.readouterr().err

    monkeypatch.setenv(KEY_VAR, "right-key")
    assert cli(judged, "run", "--resume", "1", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "completed" and summary["done"] == 60
    assert summary["counts"] == {"ok": 60}


def test_retry_errors_regrades_a_completed_runs_errors(judged: Path, fake_judge, capsys,  # type: ignore[no-untyped-def]
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, "right-key")
    with Library.open(judged) as lib:
        lib.datasets.create("flaky", [qa(f"f{i}", "q", f"[[fault:500x5]] Paris {i}" if i < 2 else "Paris", "Paris")
                                      for i in range(6)])
    assert cli(judged, "run", "judge", "flaky", "--no-cache", "--keep-going", "--json") == 1  # samples errored
    assert json.loads(capsys.readouterr().out)["counts"] == {"ok": 4, "error": 2}
    assert cli(judged, "run", "--resume", "1") == 2
    assert "already complete" in capsys.readouterr().err
    assert cli(judged, "run", "--resume", "1", "--retry-errors", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "completed" and summary["counts"] == {"ok": 6}
    assert cli(judged, "run", "--resume", "1", "--retry-errors") == 2
    assert "no errored samples to retry" in capsys.readouterr().err
    assert cli(judged, "run", "judge", "flaky", "--retry-errors") == 2
    assert "--retry-errors goes with --resume" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "said"), [
    (("--pass-threshold", "nan"), "--pass-threshold must be a finite number, not nan"),
    (("--pass-threshold", "inf"), "--pass-threshold must be a finite number, not inf"),
    (("--limit", "0"), "--limit must be 1 or more, not 0"),
    (("--limit", "-1"), "--limit must be 1 or more, not -1"),
    (("--limit", "-3"), "--limit must be 1 or more, not -3"),
    (("--concurrency", "0"), "--concurrency must be 1 or more, not 0"),
    (("--concurrency", "-2"), "--concurrency must be 1 or more, not -2"),
    (("--version", "0"), "--version must be 1 or more, not 0"),  # was graded as the current version
    (("--pass-threshold=-inf",), "--pass-threshold must be a finite number, not -inf"),
])
def test_bad_run_arguments_are_a_sentence_and_exit_2(judged: Path, capsys, args: tuple[str, ...],  # type: ignore[no-untyped-def]
                                                      said: str) -> None:
    for extra in ((), ("--dry-run",), ("--repeat", "2"), ("--generate-with", "fake")):  # every face of `run`: one request
        assert cli(judged, "run", "judge", "geo", *args, *extra) == 2, extra
        err = capsys.readouterr().err
        assert f"error: {said}" in err and "bug" not in err, extra
    assert runs_of(judged, capsys) == []


def test_an_unset_key_variable_and_an_empty_dataset_are_refused_before_a_run(
        judged: Path, fake_judge, capsys, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(KEY_VAR)
    assert cli(judged, "run", "judge", "geo") == 2
    err = capsys.readouterr().err
    assert f"endpoint 'fake' takes its API key from the environment variable {KEY_VAR}, which is not set" in err
    assert cli(judged, "endpoints", "test", "fake") == 1  # the probe says it before a call too
    assert f"{KEY_VAR}, which is not set" in capsys.readouterr().err
    assert fake_judge.requests["/v1/chat/completions"] == 0
    monkeypatch.setenv(KEY_VAR, "right-key")
    assert cli(judged, "run", "judge", "empty") == 2
    assert "dataset 'empty' has no samples" in capsys.readouterr().err
    assert runs_of(judged, capsys) == []


def _proxied(db_path: Path, url: str, proxy: str | None = None) -> None:
    with Library.open(db_path) as lib:
        config = EndpointConfig(name="corp", base_url=url, model="judge", retry_backoff=0.01, timeout=10.0,
                                max_concurrency=4, **({"proxy": proxy} if proxy else {}))
        lib.endpoints.save(config)
        lib.graders.create(BinaryJudge(key="named", criteria="c", endpoint="corp"))
        lib.datasets.create("d", [qa(f"s{i:03d}", "q", f"answer for SAMPLE-s{i:03d}") for i in range(20)])


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_asking_for_credentials_stops_the_run_and_names_the_proxy(
        db_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, scheme: str) -> None:  # type: ignore[no-untyped-def]
    need = "Basic " + base64.b64encode(b"analyst:s3cret").decode()
    proxy_log = ProxyLog()
    with ThreadServer(naming_judge(JudgeLog())) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"judge.invalid": judge.port}, need)) as proxy:
        variable = f"{scheme.upper()}_PROXY"
        monkeypatch.setenv(variable, f"http://127.0.0.1:{proxy.port}")  # no credentials given
        _proxied(db_path, f"{scheme}://judge.invalid/v1")
        assert cli(db_path, "run", "named", "d", "--no-cache") == 2
        out, err = capsys.readouterr()
        assert f"the proxy http://127.0.0.1:{proxy.port} ({variable}) refused the request" in err
        assert f"give them in {variable} as http://USER:PASSWORD@HOST:PORT" in err
        assert "the endpoint itself was not reached" in err and "run 1: stopped" in out
        assert "samples 0/20" in out and "401" not in err
        assert len(proxy_log.lines) <= 4  # the endpoint's concurrency: no call started after the first 407
        if scheme == "https":  # (the judge here speaks plain http: through a tunnel, only the 407 is real)
            return
        # the right credentials, and the run finishes what it had left
        monkeypatch.setenv(variable, f"http://analyst:s3cret@127.0.0.1:{proxy.port}")
        assert cli(db_path, "run", "--resume", "1", "--json") == 0
        assert json.loads(capsys.readouterr().out)["counts"] == {"ok": 20}


def test_the_other_schemes_proxy_variable_is_named_when_a_direct_connection_fails(
        db_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    config = EndpointConfig(name="plain", base_url="http://judge.invalid/v1", model="m")
    with pytest.raises(EndpointUnreachable) as caught:
        check_reachable(config)
    said = str(caught.value)
    assert "cannot resolve the host 'judge.invalid'" in said
    assert "HTTPS_PROXY is set, but it applies to https:// URLs only" in said and "set HTTP_PROXY too" in said
    with Library.open(db_path) as lib:
        lib.endpoints.save(config.model_copy(update={"max_retries": 0}))
    assert cli(db_path, "endpoints", "test", "plain") == 1  # the call itself says it too
    err = capsys.readouterr().err
    assert "cannot resolve the host 'judge.invalid'" in err and "HTTPS_PROXY is set, but it applies" in err
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    secure = config.model_copy(update={"base_url": "https://judge.invalid/v1"})
    with pytest.raises(EndpointUnreachable, match="http_proxy is set, but it applies to http:// URLs only; "
                                                  "this endpoint is https://, which goes through HTTPS_PROXY"):
        check_reachable(secure)
    monkeypatch.delenv("http_proxy")
    with pytest.raises(EndpointUnreachable) as plain:
        check_reachable(config)
    assert "PROXY" not in str(plain.value)  # no proxy variable at all: no hint


def test_a_run_stored_with_a_threshold_that_is_not_finite_is_a_sentence_not_a_bug(db_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Runs started before the request refused ``--pass-threshold inf`` are still in libraries."""
    from studio.core.models import BuiltinGrader

    with Library.open(db_path) as lib:
        grader = lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        data = lib.datasets.create("d", [qa("s0", "q", "a", "a")])
        run = lib.runs.create(grader.id, 1, data.id, 1, settings={"pass_threshold": float("inf")})
    for args in (("runs", "show", str(run.id), "--failed"), ("runs", "show", str(run.id))):
        code = cli(db_path, *args)
        err = capsys.readouterr().err
        assert code == 1 and "a pass threshold must be a finite number, not inf" in err, (args, err)


def test_generate_words_its_bad_arguments_as_the_run_request_does(db_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    for args, said in ((("--limit", "-3"), "--limit must be more than 0, not -3"),
                       (("--samples", "0"), "--samples must be 1 or more, not 0")):
        assert cli(db_path, "generate", "d", "--endpoint", "e", "--name", "n", *args) == 2
        assert f"error: {said}" in capsys.readouterr().err
