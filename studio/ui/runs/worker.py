"""``RunWorker``: one run's ``execute_run`` on its own thread, reporting to the GUI by queued signals.

A run is long (minutes of judge calls), so it gets a dedicated ``QThread`` rather than a slot of
the shared task pool. The engine calls back on this thread; each callback only emits a signal,
which Qt queues to the GUI thread: no widget is ever touched from here. ``cancel()`` sets the
engine's ``threading.Event``, which every scorer checks between samples and calls.
"""

from __future__ import annotations

import threading

from studio.core.engine.runner import Progress, execute_run
from studio.core.store import Library

from ..messages import describe_error
from ..qt import QObject, QtCore, Signal


class RunWorker(QtCore.QThread):
    progress = Signal(object)    # Progress, at most ~10 a second (the engine's flush rhythm)
    completed = Signal(object)   # RunInfo as stored at the end (completed or cancelled)
    failed = Signal(str)         # a sentence: the run's status is "failed" in the store

    def __init__(self, library: Library, run_id: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.run_id = run_id
        self.cancel_event = threading.Event()
        self.last_progress: Progress | None = None

    def cancel(self) -> None:
        """Ask the engine to stop; safe from any thread, idempotent."""
        self.cancel_event.set()

    @property
    def cancelling(self) -> bool:
        return self.cancel_event.is_set()

    def _report(self, progress: Progress) -> None:
        self.last_progress = progress
        self.progress.emit(progress)

    def run(self) -> None:
        try:
            info = execute_run(self.library, self.run_id, on_progress=self._report, cancel=self.cancel_event)
        except BaseException as exc:  # reported as data; the store already says "failed"
            self.failed.emit(describe_error(exc))
            return
        self.completed.emit(info)
