"""``RunWorker``: one run graded in a child process, reporting to the GUI by signals.

The engine is CPU-bound Python (scorers, JSON, SQLite writes); on a thread of the window's process
it starves the GUI thread of the GIL (stalls of 100-200 ms while a fast run streams in). So a run
is graded by ``grader-studio --db PATH run --resume RUN_ID --progress-jsonl`` in a child process,
driven by a ``QProcess`` on the GUI thread: no thread of ours, only the child's output lines, each
parsed (a few microseconds) and re-emitted as a signal. The run row itself is created by the window
(``start_run``), so the panel knows its id at once and the grid reads results as the child writes
them to the shared library file (SQLite in WAL mode: one writer, many readers).

``cancel()`` sends SIGINT: the CLI's handler sets the engine's cancel event, the run ends
"cancelled" with everything graded so far stored, and the summary line still arrives. A SIGINT is
only sent once the child has said "started" (its handler is in place by then); a cancel asked
earlier waits for that line. On Windows, where there is no SIGINT to send, it terminates the child.
A child that dies without a summary is reported by ``failed`` with its last error or stderr lines.

Start-up is bounded: a child that has not begun grading (its first progress line, sent once its graders
are ready) within ``STARTUP_SECONDS`` — stuck opening a file or the library, joining a cluster, starting a
sandbox or a local server that never answers — is killed and reported. A run whose child failed before
grading anything ends "failed" with the sentence (never left "running" or "pending"), unless another
live process is grading it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import deque
from pathlib import Path

from pydantic import ValidationError

from studio.core.engine import events
from studio.core.engine.progress import Progress
from studio.core.json_types import JsonObject
from studio.core.models import RunInfo
from studio.core.store import Library

from ..qt import QObject, QtCore, Signal

CHILD_NICENESS = 10  # the grading child's nice value (Unix): the window stays first for the CPU
STDERR_TAIL_LINES = 12
STDERR_TAIL_BYTES = 64_000  # what is kept of the child's stderr (a traceback fits easily)
#: the longest a child may take to begin grading (a local llama.cpp judge alone may take 180 s to load)
STARTUP_SECONDS = 300.0

_PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the folder holding ``studio``


def child_command(db_path: Path | str) -> list[str]:
    """Program and leading arguments of the CLI in a child process (tests substitute their own).
    A server URL goes through the environment (``child_environment``), never the command line,
    where a password in it would show in every process list."""
    from studio.core.store.location import is_server_url

    db = [] if is_server_url(db_path) else ["--db", str(db_path)]
    if getattr(sys, "frozen", False):  # a packaged build: the executable is the CLI
        return [sys.executable, *db]
    return [sys.executable, "-m", "studio", *db]


def describe_child_error(event: JsonObject) -> str:
    """The sentence for an ``error`` line, as ``describe_error`` would have said it in-process."""
    return events.describe_error(event)


class RunWorker(QObject):
    progress = Signal(object)    # Progress, at most ~10 a second (the engine's flush rhythm)
    completed = Signal(object)   # RunInfo as stored at the end (completed or cancelled)
    failed = Signal(str)         # a sentence: the run could not start, broke, or its process died
    warning = Signal(str)        # a sentence the user must see (degraded sandbox isolation)

    def __init__(self, library: Library, run_id: int, parent: QObject | None = None,
                 db_path: Path | str | None = None, allow_unsandboxed: bool = False,
                 retry_errors: bool = False) -> None:
        super().__init__(parent)
        self.allow_unsandboxed = allow_unsandboxed
        #: grade the run's errored samples again too (``run --resume --retry-errors``)
        self.retry_errors = retry_errors
        self.library = library
        self.run_id = run_id
        self.db_path = db_path if db_path is not None else library.path
        self.last_progress: Progress | None = None
        self.child_pid: int | None = None
        self._cancel_requested = False
        self._interrupt_sent = False
        self._reported = False
        self._summary: JsonObject | None = None
        self._error: JsonObject | None = None
        self._stdout = bytearray()
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        #: set when the start-up bound ran out and the child was killed for it
        self.startup_expired = False
        self.startup_seconds = STARTUP_SECONDS
        self._startup = QtCore.QTimer(self)
        self._startup.setSingleShot(True)
        self._startup.timeout.connect(self._on_startup_timeout)

        self.process = QtCore.QProcess(self)
        self.process.setProcessChannelMode(QtCore.QProcess.ProcessChannelMode.SeparateChannels)
        env = QtCore.QProcessEnvironment.systemEnvironment()
        python_path = env.value("PYTHONPATH", "")
        env.insert("PYTHONPATH", str(_PACKAGE_ROOT) + (os.pathsep + python_path if python_path else ""))
        env.insert("PYTHONUNBUFFERED", "1")
        self.process.setProcessEnvironment(env)
        self.process.readyReadStandardOutput.connect(self._read_stdout)
        self.process.readyReadStandardError.connect(self._read_stderr)
        self.process.started.connect(self._on_started)
        self.process.finished.connect(self._on_finished)
        self.process.errorOccurred.connect(self._on_error)

    # -- control -------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self.db_path is None:
            self._report_failure("an in-memory library cannot be graded in a child process")
            return
        program, *args = child_command(self.db_path)
        from studio.core.store.location import ENV_VAR, is_server_url

        if is_server_url(self.db_path):
            environment = self.process.processEnvironment()  # PYTHONPATH and the rest as set above
            environment.insert(ENV_VAR, str(self.db_path))
            self.process.setProcessEnvironment(environment)
        self._startup.start(max(1, int(self.startup_seconds * 1000)))
        self.process.start(program, [*args, "run", "--resume", str(self.run_id), "--progress-jsonl",
                                        "--cancel-on-stdin-eof",
                                        *(["--allow-unsandboxed"] if self.allow_unsandboxed else []),
                                        *(["--retry-errors"] if self.retry_errors else [])])

    def cancel(self) -> None:
        """Ask the run to stop, keeping what is graded; idempotent."""
        if self._cancel_requested:
            return
        self._cancel_requested = True
        if self.child_pid is not None:
            self._interrupt()

    @property
    def cancelling(self) -> bool:
        return self._cancel_requested

    def is_running(self) -> bool:
        return self.process.state() != QtCore.QProcess.ProcessState.NotRunning

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the child has exited (shutdown); True when it has. Reports as usual."""
        if self.is_running():
            self.process.waitForFinished(msecs)
        return not self.is_running()

    def kill(self) -> None:
        """Stop the child at once (it was asked to cancel and did not): its run is left resumable."""
        if self.is_running():
            self.process.kill()
            self.process.waitForFinished(5000)

    def _on_started(self) -> None:
        """Grading is background work: the child yields the CPU to the window (2 cores are common)."""
        pid = int(self.process.processId())
        if CHILD_NICENESS and pid and hasattr(os, "setpriority"):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, pid, CHILD_NICENESS)

    def _interrupt(self) -> None:
        if self._interrupt_sent or not self.is_running():
            return
        self._interrupt_sent = True
        if os.name == "nt" or self.child_pid is None:
            self.process.terminate()
            return
        with contextlib.suppress(ProcessLookupError):  # exited meanwhile: finished() follows
            os.kill(self.child_pid, signal.SIGINT)

    # -- the child's output ----------------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        self._stdout += bytes(self.process.readAllStandardOutput().data())
        if b"\n" not in self._stdout:
            return
        *lines, rest = self._stdout.split(b"\n")
        self._stdout = bytearray(rest)
        for line in lines:
            self._handle_line(line)

    def _read_stderr(self) -> None:
        chunk = bytes(self.process.readAllStandardError().data())
        if not chunk:
            return
        self._stderr.append(chunk)
        self._stderr_size += len(chunk)
        while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr) > 1:
            self._stderr_size -= len(self._stderr.popleft())

    def _handle_line(self, line: bytes | bytearray) -> None:
        event = events.decode(line)
        if event is None:
            return  # not ours (a library printing to stdout): ignored
        kind = event.get("event")
        if kind == "progress":
            self._startup.stop()  # grading has begun
            progress = events.progress_from(event)
            self.last_progress = progress
            self.progress.emit(progress)
        elif kind == "started":
            self.child_pid = int(event.get("pid") or self.process.processId()) or None
            if self._cancel_requested:
                self._interrupt()
        elif kind == "summary":
            self._summary = event
        elif kind == "error":
            self._error = event
        elif kind == "warning":
            self.warning.emit(str(event.get("message") or ""))

    def stderr_tail(self) -> str:
        text = b"".join(self._stderr).decode("utf-8", errors="replace")
        lines = [line for line in text.splitlines() if line.strip()]
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    # -- the end -----------------------------------------------------------------------------------------
    def _on_finished(self, exit_code: int, exit_status: QtCore.QProcess.ExitStatus) -> None:
        self._read_stdout()
        if self._stdout.strip():
            self._handle_line(bytes(self._stdout))
            self._stdout.clear()
        self._read_stderr()
        if self._summary is not None:
            try:
                info = RunInfo.model_validate(self._summary["run"])
            except (KeyError, ValidationError) as exc:
                self._report_failure(f"the run's summary could not be read ({exc})")
                return
            if not self._reported:
                self._reported = True
                self.completed.emit(info)
            return
        self._report_failure(self._failure_text(exit_code, exit_status))

    def _on_startup_timeout(self) -> None:
        if self.last_progress is None and self._summary is None and self.is_running():
            self.startup_expired = True
            self.process.kill()  # finished() follows, and reports it

    def _on_error(self, error: QtCore.QProcess.ProcessError) -> None:
        if error == QtCore.QProcess.ProcessError.FailedToStart:  # no finished() follows this one
            self._report_failure(f"the grading process could not start ({self.process.errorString()})")

    def _failure_text(self, exit_code: int, exit_status: QtCore.QProcess.ExitStatus) -> str:
        tail = self.stderr_tail()
        if self.startup_expired:
            head = (f"the run did not start grading within {self.startup_seconds:g} s (stuck opening a file, the "
                    "library, a sandbox or a judge's server), so its process was stopped")
            return f"{head}:\n{tail}" if tail else head + "."
        if self._error is not None:
            return describe_child_error(self._error)
        if exit_status == QtCore.QProcess.ExitStatus.CrashExit:
            head = "the grading process stopped unexpectedly"
            if self._interrupt_sent and os.name == "nt":
                head = "the grading process was stopped"
        else:
            head = f"the grading process exited with code {exit_code}"
        return f"{head}:\n{tail}" if tail else head + "."

    def _report_failure(self, message: str) -> None:
        self._startup.stop()
        if not self._reported:
            self._reported = True
            if self.last_progress is None:
                self._conclude_unstarted(message)
            self.failed.emit(message)

    def _conclude_unstarted(self, message: str) -> None:
        """The run never began grading in this child: its row ends "failed" with why (a run another
        live process grades, or one already concluded, is left as it is)."""
        try:
            info = self.library.runs.get(self.run_id)
            if info.status in ("pending", "interrupted"):  # "running" here: another live process has it
                self.library.runs.set_status(self.run_id, "failed", error=message)
        except Exception:  # noqa: BLE001 - the library itself failing: the sentence is still shown
            pass
