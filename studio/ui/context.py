"""The application context handed to every widget and command (git-cola's habit): no globals."""

from __future__ import annotations

from pathlib import Path

from studio.core.store import Library

from .qt import QObject, QtCore, Signal
from .tasks import TaskManager


class AppContext(QObject):
    """The open library, background tasks, settings, and change notifications between views.

    Views that change the library emit the matching signal so the others refresh; nothing polls.
    """

    graders_changed = Signal()        # a grader was created, saved, locked, deleted or restored
    datasets_changed = Signal()
    runs_changed = Signal()
    endpoints_changed = Signal()
    grader_selected = Signal(str)     # key of the grader the user opened

    def __init__(self, library: Library, db_path: Path | str, settings: QtCore.QSettings | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.db_path = db_path
        self.settings = settings or QtCore.QSettings("grader-studio", "grader-studio")
        self.tasks = TaskManager(parent=self)
        self.apply_sandbox_setting()

    def apply_sandbox_setting(self) -> None:
        """The user's opt-in for unsandboxed graders, for code the window runs itself (Try, checks)."""
        from studio.core.sandbox.settings import allow_unsandboxed

        allow_unsandboxed(str(self.settings.value("sandbox/allow_unsandboxed", "false")).lower() == "true")

    def endpoint_names(self) -> list[str]:
        """Names of the judge endpoints configured in the library (pickers in several views)."""
        return self.library.endpoints.names()

    def close(self) -> None:
        self.tasks.wait_idle()
        self.library.close()
