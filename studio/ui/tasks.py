"""Background work for the window: callables on a thread pool, results back on the GUI thread.

Anki's task manager and git-cola's runnables in one small class: a task never touches widgets; its
outcome reaches the GUI thread through a queued signal, and ``wait_idle`` lets tests and shutdown wait.

``wait_idle`` waits for the pool only: a finished task's callback is still queued for the GUI thread,
and that callback may start the next task (a runs list loaded selects a run, whose results load in
turn). ``settle`` is the whole drain: it waits, delivers the queued callbacks, and goes round again
until no task runs and no callback is pending. A test that drained with one ``wait_idle`` and one
``processEvents`` left the follow-up task running, one time in three on busy cores.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import TypeVar

from .qt import QObject, QRunnable, QtCore, QThreadPool, Signal

T = TypeVar("T")


class _Relay(QObject):
    succeeded = Signal(object)
    failed = Signal(object)


class _Task(QRunnable):
    def __init__(self, fn: Callable[[], object], relay: _Relay) -> None:
        super().__init__()
        self.fn = fn
        self.relay = relay
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result = self.fn()
        except BaseException as exc:  # reported, never raised on a pool thread
            exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            self.relay.failed.emit(exc)
        else:
            self.relay.succeeded.emit(result)


#: drain rounds ``settle`` makes at most: a chain of loads is a few deep, a timer's work never ends
SETTLE_ROUNDS = 50


class TaskManager(QObject):
    def __init__(self, max_threads: int = 4, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self._relays: set[_Relay] = set()

    def run(self, fn: Callable[[], T], on_done: Callable[[T], None] | None = None,
            on_error: Callable[[BaseException], None] | None = None) -> None:
        """Run ``fn`` off the GUI thread; ``on_done(result)`` / ``on_error(exc)`` run on the GUI thread."""
        relay = _Relay()
        self._relays.add(relay)

        def finish(_: object = None) -> None:
            self._relays.discard(relay)
            relay.deleteLater()

        if on_done is not None:
            relay.succeeded.connect(on_done)
        if on_error is not None:
            relay.failed.connect(on_error)
        relay.succeeded.connect(finish)
        relay.failed.connect(finish)
        self.pool.start(_Task(fn, relay))

    def wait_idle(self, msecs: int = 30_000) -> bool:
        return self.pool.waitForDone(msecs)

    def pending(self) -> int:
        """Tasks started whose callback has not run yet (running, or finished and queued)."""
        return len(self._relays)

    def settle(self, msecs: int = 30_000) -> bool:
        """Wait until no task runs and every callback has run, including those of tasks the callbacks
        start; on the GUI thread. False when work still runs after ``msecs``."""
        deadline = QtCore.QDeadlineTimer(msecs)
        for _round in range(SETTLE_ROUNDS):
            if not self.pool.waitForDone(max(int(deadline.remainingTime()), 0)):
                return False
            # the finished tasks' signals are queued to this thread: deliver them (and what they post)
            QtCore.QCoreApplication.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents)
            if not self._relays and self.pool.activeThreadCount() == 0:
                return True
            if deadline.hasExpired():
                return False
        return False  # something keeps starting work (a timer): the caller decides
