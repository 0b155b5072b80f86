"""What a new user met (issue 33, items 7-11): one sentence that says what to do, never a traceback."""

from __future__ import annotations

import json
import socket

import pytest

from studio.cli.app import CliError
from studio.cli.judging import _listen
from studio.core.demo.fake_server import FakeJudgeServer


def test_fake_judge_on_a_busy_port_names_the_port_and_port_0(cli) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli("fake-judge", "--port", str(port), "--no-reward", timeout=60)
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr and "Errno" not in result.stderr, result.stderr
    assert result.stderr.strip() == (
        f"error: port {port} on 127.0.0.1 is already in use (another fake-judge or server is listening "
        "there); choose another with --port N, or --port 0 for any free port")


def test_a_busy_reward_port_names_its_own_option() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(CliError, match="--reward-port 0 for any free port"):
            _listen(FakeJudgeServer("127.0.0.1", port), "127.0.0.1", port, "--reward-port")


@pytest.mark.parametrize("args, usage", [
    (("runs", "show", "1", "--bogus"), "grader-studio runs show"),
    (("endpoints", "add", "x", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--nope"),
     "grader-studio endpoints add"),
    (("validate", "x.py", "--allow-unsandboxed"), "grader-studio validate"),
    (("--bogus",), "grader-studio"),
])
def test_a_bad_option_prints_its_own_commands_usage(cli, args: tuple[str, ...], usage: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.returncode == 2, result
    assert result.stderr.startswith(f"usage: {usage} ["), result.stderr
    assert f"{usage}: error: unrecognized arguments: {args[-1]}" in result.stderr


def test_adding_an_unreachable_endpoint_adds_it_and_says_how_to_test_it(cli) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    result = cli("endpoints", "add", "typo", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m")
    assert result.returncode == 0, result
    assert result.stderr.strip() == (
        f"note: typo was added, but http://127.0.0.1:{port} could not be reached (connection refused (is the "
        "server running?)); once the server is up, check it with `grader-studio endpoints test typo`")
    assert "typo" in cli("endpoints", "list").stdout


def test_adding_a_reachable_endpoint_says_nothing_more(cli) -> None:  # type: ignore[no-untyped-def]
    with FakeJudgeServer() as server:
        result = cli("endpoints", "add", "up", "--base-url", server.base_url, "--model", "fake-judge")
    assert result.returncode == 0 and result.stderr == "", result


def test_removing_and_adding_back_a_grader_keeps_its_threshold_and_weight(cli, library) -> None:  # type: ignore[no-untyped-def]
    from studio.core.models import BuiltinGrader

    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(BuiltinGrader(key="has", function="contains"))
    library.close()
    assert cli("suites", "create", "s", "exact", "has", "--weight", "has=2", "--threshold", "has=0.7").returncode == 0
    removed = cli("suites", "remove", "s", "has")
    assert removed.returncode == 0, removed
    assert "has's weight 2 and threshold 0.7 stay in v1; `grader-studio suites add s has` brings the grader " \
           "back with them" in removed.stdout
    added = cli("suites", "add", "s", "has")
    assert added.returncode == 0, added
    assert "has keeps the weight 2 and threshold 0.7 it had in v1" in added.stdout
    [member] = [m for m in json.loads(cli("suites", "show", "s", "--json").stdout)["graders"] if m["grader"] == "has"]
    assert member["weight"] == 2 and member["threshold"] == 0.7
    # an option given wins over what it had
    assert cli("suites", "remove", "s", "has").returncode == 0
    again = cli("suites", "add", "s", "has", "--threshold", "has=0.9")
    assert "keeps the weight 2 it had in v3" in again.stdout, again
    [member] = [m for m in json.loads(cli("suites", "show", "s", "--json").stdout)["graders"] if m["grader"] == "has"]
    assert member["weight"] == 2 and member["threshold"] == 0.9


def test_near_names_come_from_one_helper() -> None:
    from studio.core.near_names import did_you_mean, near_names

    assert did_you_mean("exactt", ["exact", "contains", "judge"]) == "; did you mean 'exact'?"
    assert near_names("Exact", ["exact", "exacts"]) == ["exact", "exacts"]  # the same name in another case first
    assert did_you_mean("zzz", ["exact", "contains"]) == ""  # nothing close: nothing offered
    assert did_you_mean("exact", ["exact"]) == ""  # the name itself is not a suggestion


def test_unknown_keys_suggest_near_names_everywhere(cli, library) -> None:  # type: ignore[no-untyped-def]
    from judge_helpers import qa

    from studio.core.models import BuiltinGrader
    from studio.core.models.endpoints import EndpointConfig
    from studio.core.store.endpoints import EndpointRepository

    library.graders.create(BuiltinGrader(key="exact_match", function="exact_match"))
    library.datasets.create("geography", [qa("s", "q", "a", "a")])
    EndpointRepository.of(library).save(EndpointConfig(name="openai", base_url="http://127.0.0.1:9/v1", model="m"))
    library.close()
    assert cli("suites", "create", "capitals", "exact_match").returncode == 0
    cases = [
        (("graders", "show", "exact_mach"), "no grader with key 'exact_mach'; did you mean 'exact_match'?"),
        (("run", "exact_mach", "geography"), "no grader or suite with key 'exact_mach'; did you mean 'exact_match'?"),
        (("run", "capitls", "geography"), "no grader or suite with key 'capitls'; did you mean 'capitals'?"),
        (("run", "exact_match", "geograpy"), "no dataset named 'geograpy'; did you mean 'geography'?"),
        (("datasets", "show", "Geography"), "no dataset named 'Geography'; did you mean 'geography'?"),
        (("suites", "show", "capitels"), "no suite with key 'capitels'; did you mean 'capitals'?"),
        (("endpoints", "remove", "opnai"), "no endpoint named 'opnai'; did you mean 'openai'? (or add one with"),
        (("suites", "add", "capitals", "exact_match2", "--weight", "exact_mach=2"),
         "'exact_mach' is not one of the suite's graders; did you mean 'exact_match' or 'exact_match2'?"),
    ]
    for args, sentence in cases:
        result = cli(*args)
        assert result.returncode != 0, (args, result)
        assert sentence in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
