"""A run is repairable (issues 43 and 45): a key the endpoint refuses stops the run with the samples
not yet graded left ungraded and a sentence naming the key to fix; once fixed, a resume grades
them and the run completes with no error the stop caused. ``retry_errors`` grades a run's errored
samples again, replacing their rows. An unset key variable and an empty dataset are refused before
a run exists. Real servers on 127.0.0.1 (the scripted judge, answering 401 to a wrong key)."""

from __future__ import annotations

from pathlib import Path

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.engine.preflight import KeyNotSet
from studio.core.engine.request import RequestRefused, RunRequest
from studio.core.engine.runner import RunOptions, execute_run, start_run
from studio.core.models import BinaryJudge, BuiltinGrader, Component, CompositeGrader
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.run_graders import grader_results, run_graders

KEY_VAR = "REPAIRABLE_JUDGE_API_KEY"


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db


@pytest.fixture
def lib(library: Library, fake_judge, monkeypatch: pytest.MonkeyPatch) -> Library:  # type: ignore[no-untyped-def]
    fake_judge.required_key = "right-key"
    monkeypatch.setenv(KEY_VAR, "wrong-key")
    add_endpoint(library, fake_judge, api_key_env=KEY_VAR)
    library.graders.create(BinaryJudge(key="judge", criteria="Names the right capital.", endpoint="fake"))
    library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris" if i % 2 else "Lyon", "Paris")
                                    for i in range(60)])
    return library


def test_a_refused_key_stops_the_run_keeps_the_rest_ungraded_and_a_resume_completes_it(
        lib: Library, fake_judge, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    run = start_run(lib, "judge", "geo", RunOptions(use_cache=False))
    stopped = execute_run(lib, run.id)
    assert stopped.status == "stopped"
    # no sample is an error: a sample whose call was refused was not graded, whatever was in flight
    assert lib.runs.results(run.id) == [] and stopped.done == 0
    # no call starts once the first refusal is read: at most the endpoint's 8 were in flight then
    assert fake_judge.requests["/v1/chat/completions"] <= 8
    said = stopped.aggregates["stopped"]
    assert "endpoint 'fake' refused the key in REPAIRABLE_JUDGE_API_KEY (HTTP 401" in said
    assert f"set {KEY_VAR} to a valid key" in said and "grader is not at fault" in said
    assert f"run --resume {run.id}" in said and "60 sample(s) not graded" in said
    assert "wrong-key" not in said

    monkeypatch.setenv(KEY_VAR, "right-key")
    resumed = execute_run(lib, run.id)
    assert resumed.status == "completed" and resumed.done == 60
    rows = lib.runs.results(run.id)
    assert sorted(r["sample_idx"] for r in rows) == list(range(60))
    assert {r["status"] for r in rows} == {"ok"}


def test_the_samples_graded_before_the_refusal_are_kept(lib: Library, fake_judge,  # type: ignore[no-untyped-def]
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, "right-key")
    # each answer takes longer than the writer's 0.1 s of coalescing: the cancel lands part way
    fake_judge.latency = 0.15
    run = start_run(lib, "judge", "geo", RunOptions(use_cache=False, concurrency=1, limit=40))
    from judge_helpers import cancelled_after

    first = cancelled_after(lib, run.id, 10)
    kept = first.done
    assert first.status == "cancelled" and 10 <= kept < 40
    fake_judge.latency = 0.0
    monkeypatch.setenv(KEY_VAR, "revoked")  # the key stops working half-way through the run
    stopped = execute_run(lib, run.id)
    assert stopped.status == "stopped" and stopped.done == kept
    assert {r["status"] for r in lib.runs.results(run.id)} == {"ok"}
    monkeypatch.setenv(KEY_VAR, "right-key")
    done = execute_run(lib, run.id)
    assert done.status == "completed" and done.done == 40 and done.counts == {"ok": 40}


def test_a_suite_and_a_composite_stop_alike_and_keep_what_the_other_graders_gave(
        lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.graders.create(CompositeGrader(key="both", components=[
        Component(grader=BuiltinGrader(key="exact-part", function="exact_match")),
        Component(grader=BinaryJudge(key="judge-part", criteria="c", endpoint="fake"))]))
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="judge")]))
    for target in ("geo-suite", "both"):
        run = start_run(lib, target, "geo", RunOptions(use_cache=False))
        stopped = execute_run(lib, run.id)
        assert stopped.status == "stopped" and stopped.done == 0, target
        assert lib.runs.results(run.id) == []
    suite_run = stopped.id - 1
    # the built-in check's grades are kept; only the judge's are missing
    assert [g.key for g in run_graders(lib, suite_run)] == ["exact", "judge"]
    exact = grader_results(lib, suite_run, "exact")
    assert len(exact) == 60 and {r["status"] for r in exact} == {"ok"}
    assert grader_results(lib, suite_run, "judge") == []
    monkeypatch.setenv(KEY_VAR, "right-key")
    for run_id in (suite_run, stopped.id):
        done = execute_run(lib, run_id)
        assert done.status == "completed" and done.done == 60 and set(done.counts) <= {"ok"}, done.counts


def test_retry_errors_grades_the_errored_samples_again_and_replaces_their_rows(
        lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, "right-key")
    lib.datasets.create("flaky", [qa(f"f{i}", "q", f"[[fault:500x5]] Paris {i}" if i % 4 == 0 else "Paris", "Paris")
                                  for i in range(12)])
    run = start_run(lib, "judge", "flaky", RunOptions(use_cache=False, keep_going=True))
    first = execute_run(lib, run.id)
    assert first.status == "completed" and first.counts == {"ok": 9, "error": 3}
    with pytest.raises(Exception, match="already complete"):
        execute_run(lib, run.id)  # a plain resume leaves a completed run alone
    again = execute_run(lib, run.id, retry_errors=True)  # the server fails each of them 5 times, then answers
    assert again.status == "completed" and again.counts == {"ok": 12} and again.done == 12
    rows = lib.runs.results(run.id)
    assert sorted(r["sample_idx"] for r in rows) == list(range(12))  # replaced, never added twice


def test_retry_errors_in_a_suite_asks_only_the_grader_that_erred(lib: Library, fake_judge,  # type: ignore[no-untyped-def]
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, "right-key")
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.suites.create(SuiteDefinition(key="pair", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="judge")]))
    lib.datasets.create("flaky", [qa(f"f{i}", "q", f"[[fault:500x5]] Paris {i}" if i % 4 == 0 else "Paris", "Paris")
                                  for i in range(12)])
    run = start_run(lib, "pair", "flaky", RunOptions(use_cache=False, keep_going=True))
    first = execute_run(lib, run.id)
    assert first.status == "completed" and first.counts == {"ok": 9, "error": 3}
    calls = fake_judge.requests["/v1/chat/completions"]
    again = execute_run(lib, run.id, retry_errors=True)
    assert again.status == "completed" and again.counts == {"ok": 12}
    assert fake_judge.requests["/v1/chat/completions"] - calls == 3  # the three errored judge calls only
    assert {r["status"] for r in grader_results(lib, run.id, "judge")} == {"ok"}
    assert len(grader_results(lib, run.id, "exact")) == 12


def test_an_unset_key_variable_is_said_before_any_call_or_run(lib: Library, fake_judge,  # type: ignore[no-untyped-def]
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.core.models import parse_grader

    monkeypatch.delenv(KEY_VAR)
    lib.suites.create(SuiteDefinition(key="geo-suite", graders=[SuiteMember(grader="judge")]))
    # a jury outlives a juror whose server is down, not one whose key was never set
    add_endpoint(lib, fake_judge, name="open")  # (this one needs no key)
    lib.graders.create(parse_grader({"kind": "jury", "key": "panel", "jurors": [
        {"name": name, "grader": {"kind": "binary_judge", "key": f"j-{name}", "endpoint": endpoint,
                                  "criteria": "c"}} for name, endpoint in (("a", "open"), ("b", "open"), ("c", "fake"))]}))
    for target in ("judge", "geo-suite", "panel"):
        with pytest.raises(KeyNotSet) as caught:
            RunRequest.asked(grader=target, dataset="geo").start(lib)
        said = str(caught.value)
        assert f"endpoint 'fake' takes its API key from the environment variable {KEY_VAR}, which is not set" \
            in said and "nothing was recorded" in said
    assert lib.runs.list() == [] and fake_judge.requests["/v1/chat/completions"] == 0


def test_an_empty_dataset_or_a_selection_of_nothing_is_refused(lib: Library) -> None:
    lib.datasets.create("empty", [])
    with pytest.raises(RequestRefused, match="dataset 'empty' has no samples"):
        RunRequest.asked(grader="judge", dataset="empty").start(lib)
    with pytest.raises(RequestRefused, match="none of the samples asked for"):
        start_run(lib, "judge", "geo", RunOptions(samples=[500, 501]))
    assert lib.runs.list() == []


@pytest.mark.parametrize(("fields", "said"), [
    ({"pass_threshold": float("nan")}, "--pass-threshold must be a finite number, not nan"),
    ({"pass_threshold": float("inf")}, "--pass-threshold must be a finite number, not inf"),
    ({"limit": 0}, "--limit must be 1 or more, not 0"),
    ({"limit": -3}, "--limit must be 1 or more, not -3"),
    ({"concurrency": 0}, "--concurrency must be 1 or more, not 0"),
    ({"retry_errors": True}, "--retry-errors goes with --resume"),
])
def test_run_arguments_are_checked_once_with_a_sentence(lib: Library, fields: dict, said: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(RequestRefused) as caught:
        RunRequest.asked(grader="judge", dataset="geo", **fields).start(lib)
    assert str(caught.value) == said or str(caught.value).startswith(said)
    assert caught.value.exit_code == 2
    assert lib.runs.list() == []


def test_a_resume_never_completes_a_run_holding_the_errors_of_a_refused_key(
        lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run written by an older version: every sample stored as the endpoint's 401. Resuming it once
    the key is fixed grades nothing new and must not call it complete; --retry-errors grades them."""
    from studio.core.models import Outcome

    monkeypatch.setenv(KEY_VAR, "right-key")
    run = start_run(lib, "judge", "geo", RunOptions(use_cache=False, limit=10))
    refused = Outcome.failure("fake: HTTP 401 from fake: Incorrect API key provided.")
    lib.runs.write_results(run.id, [(i, f"s{i}", refused) for i in range(8)])
    lib.runs.set_status(run.id, "failed")
    resumed = execute_run(lib, run.id)
    assert resumed.status == "stopped" and resumed.done == 10 and resumed.counts == {"ok": 2, "error": 8}
    assert "8 sample(s) hold an error from a refused key" in resumed.aggregates["stopped"]
    assert f"run --resume {run.id} --retry-errors" in resumed.aggregates["stopped"]
    retried = execute_run(lib, run.id, retry_errors=True)
    assert retried.status == "completed" and retried.counts == {"ok": 10}
