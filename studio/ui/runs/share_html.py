"""File ▸ Export ▸ Share run as HTML: the run shown, written as one self-contained page (docs/viewer.md);
the Compare tab's Share as HTML… writes two runs' comparison the same way (``ShareCompareHtml``).

Why a child process and not a thread: the page is the CLI's ``runs export RUN --format html`` — its
header is ``runs show``'s, read by the CLI's summary functions, which the window's layer may not import
— and building the page of a 100,000-sample run is seconds of CPU-bound Python that would hold the
GIL against the GUI thread (ui/runs/worker.py says the same of grading). A ``QProcess`` driven from
the GUI thread costs the window nothing; ``cancel`` kills the child, which leaves no half file
(``safe_files.open_text`` writes beside the target and renames at the end).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..qt import QObject, QtCore, Signal
from .worker import _PACKAGE_ROOT, child_command

#: the end of the child's stderr kept for a failure's message
ERROR_TAIL = 4000


class ShareHtml(QObject):
    """One export of run ``run_id`` to ``path`` in a child process; reports ``done`` or ``failed``."""

    done = Signal(str)
    failed = Signal(str)

    def __init__(self, db_path: Path | str, run_id: int, path: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.db_path, self.run_id, self.path = db_path, run_id, path
        self.cancelled = False
        self.process = QtCore.QProcess(self)
        environment = QtCore.QProcessEnvironment.systemEnvironment()
        python_path = environment.value("PYTHONPATH", "")
        environment.insert("PYTHONPATH", str(_PACKAGE_ROOT) + (os.pathsep + python_path if python_path else ""))
        from studio.core.store.location import ENV_VAR, is_server_url

        if is_server_url(db_path):  # a password in a URL never goes on a command line
            environment.insert(ENV_VAR, str(db_path))
        self.process.setProcessEnvironment(environment)
        self.process.finished.connect(self._finished)
        self.process.errorOccurred.connect(self._error)

    def arguments(self) -> list[str]:
        """The CLI command the child runs (after the library's own arguments)."""
        return ["runs", "export", str(self.run_id), "--format", "html", "-o", self.path]

    def start(self) -> None:
        program, *args = child_command(self.db_path)
        self.process.start(program, [*args, *self.arguments()])

    def is_running(self) -> bool:
        return self.process.state() != QtCore.QProcess.ProcessState.NotRunning

    def cancel(self) -> None:
        if self.is_running():
            self.cancelled = True
            self.process.kill()

    def _finished(self, exit_code: int, exit_status: QtCore.QProcess.ExitStatus) -> None:
        if self.cancelled:
            self.failed.emit("the export was cancelled")
        elif exit_status == QtCore.QProcess.ExitStatus.NormalExit and exit_code == 0:
            self.done.emit(self.path)
        else:
            tail = bytes(self.process.readAllStandardError().data()).decode("utf-8", "replace")[-ERROR_TAIL:].strip()
            self.failed.emit(tail.removeprefix("error: ") or f"the export stopped with code {exit_code}")

    def _error(self, error: QtCore.QProcess.ProcessError) -> None:
        if error == QtCore.QProcess.ProcessError.FailedToStart:  # no finished() follows this one
            self.failed.emit(f"the export could not start ({self.process.errorString()})")


class ShareCompareHtml(ShareHtml):
    """One export of ``runs compare A B --html`` (``grader``: one grader of suite runs) to ``path``."""

    def __init__(self, db_path: Path | str, run_a: int, run_b: int, path: str, grader: str | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(db_path, run_b, path, parent)
        self.run_a, self.run_b, self.grader = run_a, run_b, grader

    def arguments(self) -> list[str]:
        return ["runs", "compare", str(self.run_a), str(self.run_b), "--html", "-o", self.path,
                *(["--grader", self.grader] if self.grader else [])]
