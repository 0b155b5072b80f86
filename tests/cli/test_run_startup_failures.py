"""A ``grader-studio run`` that gives up after its run row exists but before grading begins (the
executor or sandbox cannot start, the plan cannot be built, a bug) concludes the row ``failed`` with
why, on SQLite and PostgreSQL: no run is left ``pending`` or ``running`` by a process that ended.
A StudioError is its sentence (exit 2); a bug is a bug report (exit 70) but its run still ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import studio.core.engine.grading as grading
import studio.core.engine.runner as runner
from studio.core.errors import StudioError
from studio.core.models import BuiltinGrader
from studio.core.models.thread import Sample
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


class Refused(StudioError):
    exit_code = 2


def _raise(exc: BaseException) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


# (module, attribute): before the run is claimed (its executor is picked), and after (the engine plans it)
STEPS = [(grading, "make_executor"), (runner, "plan_of")]


@pytest.mark.parametrize("step", STEPS, ids=["executor", "plan"])
@pytest.mark.parametrize("exc, code", [(Refused("the sandbox cannot start here: no bubblewrap"), 2),
                                       (RuntimeError("a bug in planning"), 70)], ids=["sentence", "bug"])
def test_a_run_that_cannot_start_ends_failed(library: Library, cli, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                              step: tuple[Any, str], exc: BaseException, code: int) -> None:
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    library.datasets.create("d", [Sample(id="s", messages=[], completion="a", expected="a")])
    monkeypatch.setattr(*step, _raise(exc))
    ran = cli("run", "g", "d")
    assert ran.returncode == code, ran.stderr
    (run,) = library.runs.list()
    assert run.status == "failed" and run.finished_at is not None
    with library.engine.connect() as conn:  # why, as stored (what `runs show` and the window say)
        error = conn.execute(text("SELECT error FROM runs WHERE id = :r"), {"r": run.id}).scalar_one()
    assert error is not None and str(exc) in error
    if code == 2:
        assert str(exc) in ran.stderr and "Traceback" not in ran.stderr
