"""``TaskManager.settle`` drains what ``wait_idle`` and one ``processEvents`` did not: a task started by
a finished task's callback (the race behind test_a_child_that_dies_reports_its_stderr_tail's
"TaskManager pool: 1 running" teardown, issue 33 item 14)."""

from __future__ import annotations

import threading
from typing import Any

from studio.ui.tasks import TaskManager


def test_settle_waits_for_the_tasks_callbacks_start(qapp: Any) -> None:
    manager = TaskManager(max_threads=2)
    release = threading.Event()
    chain: list[str] = []

    def second() -> str:
        release.wait(30)  # holds the pool until the first callback has run
        return "second"

    def first_done(result: str) -> None:
        chain.append(result)
        manager.run(second, chain.append)  # what a loaded runs list does: start the next load
        release.set()

    manager.run(lambda: "first", first_done)
    assert manager.settle()
    assert chain == ["first", "second"]
    assert manager.pending() == 0 and manager.pool.activeThreadCount() == 0


def test_a_single_drain_round_leaves_the_follow_up_running(qapp: Any) -> None:
    """What the fixtures did before: deterministic here, because the follow-up waits for a release
    that only comes after the drain round."""
    manager = TaskManager(max_threads=2)
    release = threading.Event()
    done: list[str] = []
    manager.run(lambda: "first", lambda _: manager.run(lambda: release.wait(30) and "second", done.append))
    manager.wait_idle()
    qapp.processEvents()
    assert manager.pending() == 1 and done == []  # the old drain ends here, work still running
    release.set()
    assert manager.settle() and done == ["second"]
