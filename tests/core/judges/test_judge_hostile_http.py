"""A hostile grader file or judge server over real HTTP (issue 11, items 7, 8 and 11): a file cannot
choose which secret goes where; a key echoed back is stored nowhere; an endless body or a day-long
Retry-After costs one retryable failure, not the studio's memory or the run."""

from __future__ import annotations

import json
import tracemalloc

from judge_helpers import add_endpoint, library_bytes, qa

from studio.cli import main
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.judges.http.limits import MAX_RETRY_AFTER, parse_retry_after
from studio.core.judges.reward_keys import covers
from studio.core.models import BinaryJudge, ExternalEndpoint
from studio.core.models import files as definition_files

AWS_SECRET = "aws-SECRET-do-not-send-4b7e1c90"
USER_KEY = "sk-user-bound-REWARD-93ad01f2"
JUDGE_KEY = "sk-judge-ECHOED-0c7d5e2a19"



# --- 7. a grader file cannot choose a secret ---------------------------------------------------------


def test_a_grader_file_cannot_send_an_env_var_anywhere(
    library, reward_server, score, monkeypatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    grader = ExternalEndpoint(
        key="steal", url=reward_server.url, api_key_env="AWS_SECRET_ACCESS_KEY", timeout_seconds=2
    )
    outcomes = score(grader, [qa("a", "q", "Paris", "Paris"), qa("b", "q", "Lyon", "Paris")])
    assert reward_server.requests["/score"] == 0  # nothing sent, with or without the key
    assert reward_server.last_authorization is None
    for outcome in outcomes:
        assert outcome.status == "error"
        assert "cannot choose a secret" in outcome.error
        assert reward_server.url in outcome.error and "AWS_SECRET_ACCESS_KEY" in outcome.error
        assert AWS_SECRET not in outcome.error


def test_the_key_comes_from_the_endpoint_the_user_bound_to_that_url(
    library, reward_server, fake_judge, score, monkeypatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("REWARD_API_KEY", USER_KEY)
    monkeypatch.setenv("JUDGE_API_KEY", JUDGE_KEY)
    # a key bound to another server is never sent to the grader's URL
    add_endpoint(library, fake_judge, name="judge", api_key_env="JUDGE_API_KEY")
    grader = ExternalEndpoint(
        key="rs",
        url=f"{reward_server.url}/",
        api_key_env="AWS_SECRET_ACCESS_KEY",
        timeout_seconds=2,
    )
    [refused] = score(grader, [qa("a", "q", "Paris", "Paris")])
    assert refused.status == "error" and reward_server.requests["/score"] == 0

    # the user binds their own variable to the reward server's URL: that key, and only it, goes
    add_endpoint(library, fake_judge, name="reward", api_key_env="REWARD_API_KEY", base_url=reward_server.url,
                 model="reward-server")
    [outcome] = score(grader, [qa("b", "q", "Paris", "Paris")])
    assert outcome.status == "ok", outcome.error
    assert reward_server.last_authorization == f"Bearer {USER_KEY}"

    # a grader without api_key_env on an unbound URL sends no key at all
    other = ExternalEndpoint(key="open", url=reward_server.url.replace("127.0.0.1", "localhost"))
    [plain] = score(other, [qa("c", "q", "Paris", "Paris")])
    assert plain.status == "ok" and reward_server.last_authorization is None


def test_url_binding_is_by_origin_and_path() -> None:
    assert covers("http://127.0.0.1:9000", "http://127.0.0.1:9000/score")
    assert covers("https://rm.example/v1", "https://rm.example/v1/score")
    assert not covers("https://rm.example/v1", "https://rm.example/v10/score")
    assert not covers("https://rm.example", "https://rm.example.evil.net/score")
    assert not covers("https://rm.example", "http://rm.example/score")
    assert not covers("https://rm.example:8443", "https://rm.example/score")


def test_importing_a_grader_that_names_a_secret_asks_to_bind_one(
    db_path, reward_server, tmp_path, capsys
) -> None:
    grader = ExternalEndpoint(
        key="remote", url=f"{reward_server.url}/score", api_key_env="AWS_SECRET_ACCESS_KEY"
    )
    path = definition_files.save(grader, tmp_path / "remote.grader.yaml")
    assert main(["--db", str(db_path), "graders", "create", str(path)]) == 0
    err = capsys.readouterr().err
    assert "AWS_SECRET_ACCESS_KEY" in err and f"{reward_server.url}/score" in err
    assert "endpoints add" in err and "--base-url" in err


# --- 8. a key echoed back is redacted from results, judge_cache and exports -------------------------


def test_an_echoed_key_is_stored_and_exported_nowhere(
    library, db_path, fake_judge, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", JUDGE_KEY)
    add_endpoint(library, fake_judge, name="fake", api_key_env="JUDGE_API_KEY")
    # the server puts the key it received in a 200 answer, plain and JSON-escaped
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in JUDGE_KEY)
    fake_judge.add_rule(
        "echo", f'{{"reasoning": "your key is {JUDGE_KEY} or {escaped}", "verdict": "PASS"}}'
    )
    library.graders.create(BinaryJudge(key="echo", criteria="c", endpoint="fake"))
    library.datasets.create("d", [qa("s1", "echo please", "a"), qa("s2", "echo again", "b")])
    run = run_grader(library, "echo", "d", RunOptions(concurrency=2))
    assert run.counts == {"ok": 2}
    assert fake_judge.last_authorization == f"Bearer {JUDGE_KEY}"  # it was sent, as it must be

    rows = library.runs.results(run.id)
    assert all("***" in row["rationale"] for row in rows)
    exports = []
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"results.{fmt}"
        assert (
            main(
                [
                    "--db",
                    str(db_path),
                    "runs",
                    "export",
                    str(run.id),
                    "--format",
                    fmt,
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        exports.append(out.read_text())
    library.engine.dispose()
    stored = library_bytes(db_path).decode("latin-1")
    for text in [stored, *exports, json.dumps(rows, default=str)]:
        assert JUDGE_KEY not in text


# --- 11. response body and Retry-After caps ---------------------------------------------------------


def test_an_endless_body_is_a_retryable_failure_with_bounded_memory(
    library, fake_judge, score
) -> None:
    add_endpoint(library, fake_judge, max_retries=2)
    fake_judge.inject("endless", times=1)
    tracemalloc.start()
    try:
        [outcome] = score(BinaryJudge(key="b", criteria="c", endpoint="fake"), [qa("s", "q", "a")])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.status == "ok", outcome.error
    assert outcome.details["calls"][0]["attempts"] == 2
    assert peak < 200 * 1024 * 1024  # the 2 GiB body was never held

    fake_judge.inject("endless", times=3)
    [failed] = score(BinaryJudge(key="b2", criteria="c2", endpoint="fake"), [qa("t", "q", "a")])
    assert failed.status == "error" and "larger than 16 MiB" in failed.error


def test_a_day_long_retry_after_is_not_honoured(library, fake_judge, score) -> None:
    assert parse_retry_after("86400") is None and parse_retry_after("2") == 2.0
    assert parse_retry_after(str(MAX_RETRY_AFTER + 1)) is None
    add_endpoint(library, fake_judge, max_retries=2)
    fake_judge.inject("429", times=1, delay=86400)
    [outcome] = score(BinaryJudge(key="b", criteria="c", endpoint="fake"), [qa("s", "q", "a")])
    assert outcome.status == "ok", outcome.error  # retried on our own backoff, not in a day
    assert outcome.details["calls"][0]["attempts"] == 2

    fake_judge.inject("429", times=3, delay=86400)
    [failed] = score(BinaryJudge(key="b2", criteria="c2", endpoint="fake"), [qa("t", "q", "a")])
    assert failed.status == "error"
    assert "HTTP 429" in failed.error and "past our cap" in failed.error
    assert "gave up after 3 attempts" in failed.error
