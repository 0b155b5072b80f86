"""A run request graded in one call (``grading.grade``): checked before a run exists, recorded,
graded and concluded; its listener hears ``RunStarted`` once the run exists and before its first
progress, and a cancel from then on stops the run, which is concluded either way."""

from __future__ import annotations

import threading

import pytest

from studio.core.engine.grading import RunEvent, RunStarted, grade
from studio.core.engine.progress import Progress
from studio.core.engine.request import RequestRefused, RunRequest
from studio.core.models import BuiltinGrader, Sample, Turn
from studio.core.store import Library


@pytest.fixture
def ready(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content="hi")],
                                          completion="a", expected="a" if i % 2 else "b") for i in range(6)])
    return library


def test_the_run_is_checked_recorded_graded_and_concluded_in_one_call(ready: Library) -> None:
    heard: list[RunEvent] = []
    done = grade(ready, RunRequest(grader="exact", dataset="qa", limit=4, fail_under=["0.9"]),
                 cancel=threading.Event(), on_event=heard.append)
    (run,) = ready.runs.list()
    assert done.run.info.id == run.id and run.status == "completed" and run.done == 4
    # started once, first, with the run's size; then the run's own progress, ending finished
    assert heard[0] == RunStarted(run.id, total=4, done=0, where=None)
    assert not any(isinstance(e, RunStarted) for e in heard[1:])
    progress = [e for e in heard if isinstance(e, Progress)]
    assert progress and progress[-1].finished and progress[-1].done == 4
    # concluded: the verdict of --fail-under 0.9 over a mean of 0.5 is a miss (exit 1)
    assert done.verdict.exit_code == 1


def test_a_refused_request_leaves_no_run_and_tells_nothing(ready: Library) -> None:
    heard: list[RunEvent] = []
    with pytest.raises(RequestRefused, match="--retry-errors goes with --resume"):
        grade(ready, RunRequest(grader="exact", dataset="qa", retry_errors=True), cancel=threading.Event(),
              on_event=heard.append)
    assert ready.runs.list() == [] and heard == []


def test_a_cancel_once_started_stops_the_run_and_it_ends_cancelled(ready: Library) -> None:
    cancel = threading.Event()

    def listener(event: RunEvent) -> None:
        if isinstance(event, RunStarted):
            cancel.set()  # as Ctrl-C does once the CLI hears that the run started

    done = grade(ready, RunRequest(grader="exact", dataset="qa"), cancel=cancel, on_event=listener)
    (run,) = ready.runs.list()
    assert run.status == "cancelled" and run.done < run.total
    assert done.run.info.status == "cancelled"


def test_a_run_whose_listener_fails_before_grading_is_concluded_not_left_pending(ready: Library) -> None:
    def listener(event: RunEvent) -> None:
        if isinstance(event, RunStarted):
            raise KeyboardInterrupt  # Ctrl-C before the CLI could arm its own handler

    with pytest.raises(KeyboardInterrupt):
        grade(ready, RunRequest(grader="exact", dataset="qa"), cancel=threading.Event(), on_event=listener)
    (run,) = ready.runs.list()
    assert run.status == "cancelled" and run.finished_at is not None and run.done == 0
