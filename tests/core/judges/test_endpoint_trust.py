"""A shared endpoint cannot move a user's key (issue 44, item 1): on SQLite and PostgreSQL, a
teammate (another author) rewrites where an endpoint sends the key; the user's run and probe send
nothing there, and say who changed what, until the user approves (``endpoints trust``).

Every server is real, on 127.0.0.1: two judges (the approved one, and the teammate's) and a forward
proxy that logs what reaches it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from judge_helpers import qa, without_proxy_variables
from net_servers import JudgeLog, ProxyLog, ThreadServer, forward_proxy, make_ca, naming_judge

from studio.cli import main
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.authors import USER_ENV
from studio.core.store.endpoint_trust import APPROVALS_FILE, EndpointNotApproved, KeyVariableRefused
from studio.core.store.endpoints import EndpointRepository

KEY = "sk-alice-0d9c2e7a41b3f865"
OTHER_KEY = "sk-alice-other-77c1d0e2ab"
KEY_HEADERS = ("authorization", "x-api-key", "api-key")


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """Each test here runs on SQLite and on PostgreSQL."""
    return any_db


@pytest.fixture(autouse=True)
def alice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_ENV, "alice")
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    without_proxy_variables(monkeypatch)


def as_bob(monkeypatch: pytest.MonkeyPatch, library: Library, **changes: object) -> None:
    """A teammate's studio rewrites endpoint ``judge`` (their own writes record them as author)."""
    monkeypatch.setenv(USER_ENV, "bob")
    repo = EndpointRepository.of(library)
    repo.save(repo.get("judge").model_copy(update=changes))
    monkeypatch.setenv(USER_ENV, "alice")


def add_as_alice(db_path: Path | str, base_url: str, *extra: str) -> None:
    assert main(["--db", str(db_path), "endpoints", "add", "judge", "--base-url", base_url, "--model", "judge",
                 "--api-key-env", "JUDGE_API_KEY", "--timeout", "5", *extra]) == 0


def keys_seen(log: JudgeLog) -> list[str]:
    return [headers[h] for _, headers in log.requests for h in KEY_HEADERS if h in headers]


def run_once(library: Library) -> list[dict]:
    if "named" not in {g.key for g in library.graders.list()}:
        library.graders.create(BinaryJudge(key="named", criteria="c", endpoint="judge"))
    name = f"d{len(library.datasets.list())}"
    library.datasets.create(name, [qa("s000", "q", "answer for SAMPLE-s000")])
    run = run_grader(library, "named", name, RunOptions(use_cache=False))
    return library.runs.results(run.id)


def test_a_teammates_new_base_url_gets_no_key_until_the_user_trusts_it(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    approved, theirs = JudgeLog(), JudgeLog()
    with ThreadServer(naming_judge(approved)) as first, ThreadServer(naming_judge(theirs)) as second:
        first_url, second_url = f"http://127.0.0.1:{first.port}/v1", f"http://127.0.0.1:{second.port}/v1"
        add_as_alice(db_path, first_url)
        assert run_once(library)[0]["status"] == "ok"
        assert keys_seen(approved) == [f"Bearer {KEY}"]
        as_bob(monkeypatch, library, base_url=second_url)
        capsys.readouterr()

        # the probe, a run from the CLI and a run from the engine: nothing reaches the second server
        assert main(["--db", str(db_path), "endpoints", "test", "judge"]) == 2
        said = capsys.readouterr().err
        assert f"its base URL was changed from {first_url} to {second_url} by bob on " in said
        assert "grader-studio endpoints trust judge" in said and KEY not in said
        library.datasets.create("cli", [qa("s1", "q", "answer for SAMPLE-s1")])
        assert main(["--db", str(db_path), "run", "named", "cli"]) == 2
        assert "its base URL was changed" in capsys.readouterr().err
        with pytest.raises(EndpointNotApproved, match="by bob on"):
            run_once(library)
        assert theirs.requests == []

        assert main(["--db", str(db_path), "endpoints", "list", "--json"]) == 0
        [listed] = json.loads(capsys.readouterr().out)
        assert listed["approval"] == "changed since approved"
        # no terminal to ask on, no --yes: nothing is approved
        assert main(["--db", str(db_path), "endpoints", "trust", "judge"]) == 2
        assert theirs.requests == []
        assert main(["--db", str(db_path), "endpoints", "trust", "judge", "--yes"]) == 0
        out = capsys.readouterr().out
        assert f"its base URL was changed from {first_url} to {second_url}" in out and "by bob" in out
        assert run_once(library)[0]["status"] == "ok"
        assert keys_seen(theirs) == [f"Bearer {KEY}"]
        assert main(["--db", str(db_path), "endpoints", "list", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["approval"] == "approved"


def test_a_teammates_key_variable_proxy_or_ca_change_is_refused_until_trusted(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OTHER_API_KEY", OTHER_KEY)
    judge_log, proxy_log = JudgeLog(), ProxyLog()
    ca = make_ca(tmp_path / "ca", "judge.invalid")
    with ThreadServer(naming_judge(judge_log)) as judge, \
            ThreadServer(forward_proxy(proxy_log, {"127.0.0.1": judge.port})) as proxy:
        add_as_alice(db_path, f"http://127.0.0.1:{judge.port}/v1")
        proxy_url = f"http://127.0.0.1:{proxy.port}"
        for changes, said in (
            ({"api_key_env": "OTHER_API_KEY"}, "its key variable was changed from $JUDGE_API_KEY to $OTHER_API_KEY"),
            ({"proxy": proxy_url}, f"its proxy was changed from none to {proxy_url}"),
            ({"ca_bundle": str(ca.ca_pem)}, f"its CA bundle was changed from none to {ca.ca_pem}"),
        ):
            as_bob(monkeypatch, library, **changes)
            with pytest.raises(EndpointNotApproved) as refused:
                run_once(library)
            assert said in str(refused.value) and "by bob on" in str(refused.value)
            assert judge_log.requests == [] and proxy_log.lines == []
            # the user's own edit back restores what they approved
            add_as_alice(db_path, f"http://127.0.0.1:{judge.port}/v1", "--replace")
        # an approved CA bundle whose contents change is asked again
        as_bob(monkeypatch, library, ca_bundle=str(ca.ca_pem))
        assert main(["--db", str(db_path), "endpoints", "trust", "judge", "--yes"]) == 0
        assert run_once(library)[0]["status"] == "ok"
        ca.ca_pem.write_text(ca.ca_pem.read_text() + "\n")
        with pytest.raises(EndpointNotApproved, match="its CA bundle's contents changed"):
            run_once(library)
        assert len(judge_log.requests) == 1 and proxy_log.lines == []


def test_first_use_asks_unless_the_user_wrote_the_row_of_a_local_library(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = JudgeLog()
    shared = isinstance(db_path, str)
    with ThreadServer(naming_judge(log)) as judge:
        config = EndpointConfig(name="judge", base_url=f"http://127.0.0.1:{judge.port}/v1", model="judge",
                                api_key_env="JUDGE_API_KEY", timeout=5)
        monkeypatch.setenv(USER_ENV, "bob")
        EndpointRepository.of(library).save(config)
        monkeypatch.setenv(USER_ENV, "alice")
        with pytest.raises(EndpointNotApproved, match="was last written by bob on .* you have not approved it"):
            run_once(library)
        assert log.requests == []
        # a row alice wrote: a single analyst's SQLite library is never asked; a shared one is, once
        EndpointRepository.of(library).save(config)
        if shared:
            with pytest.raises(EndpointNotApproved, match="last written by alice"):
                run_once(library)
            assert log.requests == []
            assert main(["--db", str(db_path), "endpoints", "trust", "judge", "--yes"]) == 0
        assert run_once(library)[0]["status"] == "ok"
        assert keys_seen(log) == [f"Bearer {KEY}"]


def test_a_keyless_endpoint_needs_no_approval(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = JudgeLog()
    with ThreadServer(naming_judge(log)) as judge:
        add_as_alice(db_path, "http://127.0.0.1:9/v1")
        # bob points it at a server that takes no key (an unset key variable is refused before a run)
        as_bob(monkeypatch, library, base_url=f"http://127.0.0.1:{judge.port}/v1", api_key_env=None)
        assert run_once(library)[0]["status"] == "ok"
        assert len(log.requests) == 1 and keys_seen(log) == []


def test_a_stored_endpoint_names_only_key_variables_the_user_allows(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-s3cr3t-never-sent")
    log = JudgeLog()
    with ThreadServer(naming_judge(log)) as judge:
        url = f"http://127.0.0.1:{judge.port}/v1"
        assert main(["--db", str(db_path), "endpoints", "add", "judge", "--base-url", url, "--model", "m",
                     "--api-key-env", "AWS_SECRET_ACCESS_KEY"]) == 2
        said = capsys.readouterr().err
        assert "$AWS_SECRET_ACCESS_KEY is not one you allow" in said and "GRADER_STUDIO_KEY_VARIABLES" in said
        assert EndpointRepository.of(library).names() == []
        add_as_alice(db_path, url)
        as_bob(monkeypatch, library, api_key_env="AWS_SECRET_ACCESS_KEY")
        with pytest.raises(KeyVariableRefused, match=r"\$AWS_SECRET_ACCESS_KEY is not one you allow"):
            run_once(library)
        assert log.requests == []
        # the user may allow it: then it is a change like any other, to approve
        monkeypatch.setenv("GRADER_STUDIO_KEY_VARIABLES", "*_API_KEY,AWS_SECRET_ACCESS_KEY")
        with pytest.raises(EndpointNotApproved, match=r"key variable was changed"):
            run_once(library)
        assert log.requests == []


def test_the_approvals_file_is_private_and_never_followed(
    db_path: Path | str, endpoint_approvals: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_as_alice(db_path, "http://127.0.0.1:9/v1")
    path = endpoint_approvals / APPROVALS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert KEY not in path.read_text()
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    path.unlink()
    os.symlink(target, path)
    capsys.readouterr()
    assert main(["--db", str(db_path), "endpoints", "add", "judge", "--replace", "--base-url",
                 "http://127.0.0.1:9/v1", "--model", "judge"]) == 1
    assert "is a symbolic link" in capsys.readouterr().err
    assert target.read_text() == "{}"


def test_a_teammates_unreadable_row_is_a_sentence(
    library: Library, db_path: Path | str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sqlalchemy import update

    from studio.core.store.tables import endpoints

    add_as_alice(db_path, "http://127.0.0.1:9/v1")
    bad = json.dumps({"name": "judge", "base_url": "http://bob:hunter2@evil.example/v1", "model": "m"})
    with library.engine.begin() as conn:
        conn.execute(update(endpoints).values(config=bad, updated_by="bob"))
    capsys.readouterr()
    assert main(["--db", str(db_path), "endpoints", "list"]) == 0  # the others still list
    said = capsys.readouterr().err
    assert "endpoint “judge” (written by bob) stored in this library is broken" in said
    assert "hunter2" not in said and "Traceback" not in said


def test_a_generation_sends_no_key_to_a_teammates_url_and_the_sentence_is_one_plain_line(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from studio.core.engine.generate import GenerationSettings, generate

    theirs = JudgeLog()
    with ThreadServer(naming_judge(theirs)) as second:
        add_as_alice(db_path, "http://127.0.0.1:9/v1")
        monkeypatch.setenv(USER_ENV, "bob\x1b]0;pwned\x07\nalice")
        repo = EndpointRepository.of(library)
        repo.save(repo.get("judge").model_copy(update={"base_url": f"http://127.0.0.1:{second.port}/v1"}))
        monkeypatch.setenv(USER_ENV, "alice")
        library.datasets.create("src", [qa("s1", "q", "a")])
        with pytest.raises(EndpointNotApproved) as refused:
            generate(library, "gen", GenerationSettings(source="src", endpoint="judge"))
        said = str(refused.value)
        assert "by bob\\x1b]0;pwned\\x07\\nalice on " in said
        assert all(ch.isprintable() for ch in said)
    assert theirs.requests == []


def test_a_run_that_calls_no_judge_is_not_held_by_an_unapproved_endpoint(
    library: Library, db_path: Path | str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from studio.core.models import BuiltinGrader, Component, CompositeGrader

    add_as_alice(db_path, "http://127.0.0.1:9/v1")
    as_bob(monkeypatch, library, base_url="http://127.0.0.1:10/v1")
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(CompositeGrader(key="mixed", components=[
        Component(grader=BuiltinGrader(key="e2", function="exact_match")),
        Component(grader=BinaryJudge(key="inner", criteria="c", endpoint="judge"))]))
    library.datasets.create("d", [qa("s1", "q", "a", "a")])
    capsys.readouterr()
    assert main(["--db", str(db_path), "run", "exact", "d", "--json"]) == 0
    # a judge inside a composite is checked before the run exists, like a judge alone
    assert main(["--db", str(db_path), "run", "mixed", "d"]) == 2
    assert "its base URL was changed" in capsys.readouterr().err
