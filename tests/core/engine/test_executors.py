"""Where a run grades, without starting Ray: which graders go to a cluster, and the sentence a user
gets when Ray is not installed (the Ray runs themselves are in test_ray_executor.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.cli import main
from studio.core.demo import build_demo
from studio.core.engine.executors import RAY_HINT, ExecutorError, LocalExecutor, make_executor
from studio.core.engine.executors.placement import driver_reason
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db



@pytest.fixture
def demo(library: Library) -> Library:
    build_demo(library)
    return library


def definition(library: Library, key: str):  # type: ignore[no-untyped-def]
    record = library.graders.get(key)
    return library.graders.version(key, record.current_version).definition


@pytest.mark.parametrize("key", ["qa-exact-match", "qa-token-f1-mka1", "contact-fields-letta", "qa-exact-builtin",
                                 "answer-not-empty", "qa-blended-score", "json-strict-gate"])
def test_cpu_bound_graders_go_to_the_cluster(demo: Library, key: str) -> None:
    assert driver_reason(definition(demo, key)) is None


@pytest.mark.parametrize(("key", "why"), [
    ("qa-correctness-judge", "judges stay on this machine"),
    ("answer-quality-1to5", "judges stay on this machine"),
    ("local-reward-server", "calls an endpoint"),
    ("sentiment-macro-f1", "whole dataset in one call"),
])
def test_judges_and_whole_dataset_graders_stay_on_the_driver(demo: Library, key: str, why: str) -> None:
    reason = driver_reason(definition(demo, key))
    assert reason is not None and why in reason


def test_local_is_the_default_and_changes_nothing(demo: Library) -> None:
    assert isinstance(make_executor(None), LocalExecutor)
    info = run_grader(demo, "qa-exact-builtin", "qa", RunOptions())
    assert info.settings["executor"] == "local" and "executor" not in info.aggregates
    with pytest.raises(ExecutorError, match="choose 'local' or 'ray'"):
        make_executor("spark")


def test_without_ray_the_option_says_how_to_get_it(demo: Library, db_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import studio.core.engine.executors as executors

    # the run request asks the executors module at check time (engine/request.py): one place to patch
    monkeypatch.setattr(executors, "ray_available", lambda: False)
    before = len(demo.runs.list())
    code = main(["--db", str(db_path), "run", "qa-exact-builtin", "qa", "--executor", "ray"])
    err = capsys.readouterr().err
    assert code == 2 and "pip install 'grader-studio[ray]'" in err and "Traceback" not in err
    assert err.count("\n") == 1  # one sentence
    assert len(demo.runs.list()) == before  # refused before any run was recorded
    with pytest.raises(ExecutorError, match=r"grader-studio\[ray\]"):
        make_executor("ray")
    assert "pip install 'grader-studio[ray]'" in RAY_HINT
