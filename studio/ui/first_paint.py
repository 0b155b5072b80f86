"""A check hook for the packaged app: with ``GRADER_STUDIO_FIRST_PAINT=FILE.png`` set, the window saves
what it painted first into FILE.png and quits.

``packaging/smoke`` has no Python of its own inside the bundle to drive the window with, so it asks
the real executable, started the way a user starts it, to prove its window paints (the screenshot)
and how long that takes (the process's lifetime, timed against the pip-installed app's).
Without the variable nothing is installed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from .qt import QtCore, QtWidgets

VARIABLE = "GRADER_STUDIO_FIRST_PAINT"


def _exit_app(code: int) -> None:
    QtWidgets.QApplication.exit(code)


class _FirstPaint(QtCore.QObject):
    """Waits for the window's first paint, then grabs it from the next event-loop turn and quits."""

    def __init__(self, window: QtWidgets.QWidget, path: str, quit_app: Callable[[int], None]) -> None:
        super().__init__(window)
        self.window = window
        self.path = path
        self.quit_app = quit_app
        self.done = False

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt API
        if not self.done and event.type() == QtCore.QEvent.Type.Paint:
            self.done = True
            QtCore.QTimer.singleShot(0, self.save_and_quit)
        return False

    def save_and_quit(self) -> None:
        saved = self.window.grab().save(self.path, "PNG")
        if not saved:
            print(f"error: the first paint could not be saved to {self.path}", file=sys.stderr)
        self.quit_app(0 if saved else 1)


def arm(window: QtWidgets.QWidget, quit_app: Callable[[int], None] = _exit_app) -> None:
    """Install the hook on ``window`` when the variable asks for it (before ``show()``); ``quit_app``
    ends the application's event loop with the exit code."""
    path = os.environ.get(VARIABLE)
    if path:
        window.installEventFilter(_FirstPaint(window, path, quit_app))
