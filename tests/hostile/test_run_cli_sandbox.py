"""``run`` is never silent about the sandbox: without bubblewrap it refuses grader code unless the
user opts in, and with the opt-in it says, every time, that isolation is degraded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from namespaces_fallback import require_namespaces
from no_bwrap import path_without_bwrap

from studio.core.models import BuiltinGrader, FunctionGrader, Sample, Turn
from studio.core.store import Library

GRADER = "async def grade(thread):\n    return 1.0\n"


@pytest.fixture
def lib_with_graders(db_path: Path) -> Path:
    with Library.open(db_path) as lib:
        lib.graders.create(FunctionGrader(key="fn", source=GRADER, timeout_seconds=2))
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")],
                                         completion="4", expected="4") for i in range(3)])
    return db_path


def test_run_refuses_grader_code_without_bubblewrap_and_says_why(cli, lib_with_graders, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("run", "fn", "d", env={"PATH": path_without_bwrap(tmp_path)})
    assert result.returncode == 2
    assert "bubblewrap is not available" in result.stderr and "--allow-unsandboxed" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_with_the_opt_in_warns_that_isolation_is_degraded(cli, lib_with_graders, tmp_path) -> None:  # type: ignore[no-untyped-def]
    require_namespaces()
    result = cli("run", "fn", "d", "--allow-unsandboxed", env={"PATH": path_without_bwrap(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "warning: isolation is degraded" in result.stderr and "'namespaces'" in result.stderr
    jsonl = cli("run", "fn", "d", "--allow-unsandboxed", "--progress-jsonl", env={"PATH": path_without_bwrap(tmp_path)})
    assert '"event": "warning"' in jsonl.stdout


def test_a_grader_without_code_runs_without_a_warning(cli, lib_with_graders, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("run", "exact", "d", env={"PATH": path_without_bwrap(tmp_path)})
    assert result.returncode == 0 and "warning" not in result.stderr


def test_run_stops_a_grader_that_fails_every_sample_and_keep_going_continues(cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    with Library.open(db_path) as lib:
        lib.graders.create(FunctionGrader(key="broken", source="async def grade(thread):\n    return 1 / 0\n"))
        lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")], completion="4")
                                  for i in range(30)])
    stopped = cli("run", "broken", "d", "--allow-unsandboxed")
    assert stopped.returncode == 2  # the run could not be done
    assert "stopped after the first 5 samples all failed the same way" in stopped.stdout
    assert "ZeroDivisionError" in stopped.stdout
    everything = cli("run", "broken", "d", "--allow-unsandboxed", "--keep-going")
    assert "samples 30/30" in everything.stdout and "error 30" in everything.stdout


def test_repeat_takes_the_opt_in_and_says_so_as_every_run_does(cli, lib_with_graders, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``run --repeat N`` grades N runs: without bubblewrap it is refused in one sentence (not N runs
    of errored samples), and ``--allow-unsandboxed`` lets it grade with the degraded notice."""
    path = path_without_bwrap(tmp_path)
    refused = cli("run", "fn", "d", "--repeat", "2", env={"PATH": path})
    assert refused.returncode == 2
    assert "bubblewrap is not available" in refused.stderr and "--allow-unsandboxed" in refused.stderr
    assert json.loads(cli("runs", "list", "--json").stdout) == []  # refused before any run exists
    require_namespaces()
    repeated = cli("run", "fn", "d", "--repeat", "2", "--allow-unsandboxed", "--json", env={"PATH": path})
    assert repeated.returncode == 0, repeated.stderr
    assert "warning: isolation is degraded" in repeated.stderr
    runs = json.loads(repeated.stdout)["runs"]
    assert [(r["status"], r["counts"]) for r in runs] == [("completed", {"ok": 3})] * 2
