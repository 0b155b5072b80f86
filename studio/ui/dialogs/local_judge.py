"""Settings' offer of a real judge on this machine: llama-cpp-python's server (``[local]`` extra).

The same as ``grader-studio local-judge``: start the server (the tiny demo model, or a GGUF the
user picks), register and probe it as an endpoint. Starting takes seconds, so it runs as a
background task; the server lives as long as the window (stopped when the application quits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context import AppContext
from ..file_dialogs import open_file
from ..messages import describe_error
from ..qt import QtWidgets, Signal

if TYPE_CHECKING:
    from studio.core.judges.http.local_server import LocalJudgeInfo, LocalJudgeServer

_RUNNING: dict[str, LocalJudgeServer] = {}  # endpoint name -> LocalJudgeServer, for the life of the application


def stop_local_judges() -> None:
    for server in list(_RUNNING.values()):
        server.stop()
    _RUNNING.clear()


class LocalJudgeOffer(QtWidgets.QGroupBox):
    """"Judge with a model on this machine": a model file (empty = the demo model) and Start."""

    registered = Signal(str)

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__("A judge on this machine (llama.cpp)", parent)
        from studio.core.judges.http.local_server import DEMO_LABEL, INSTALL_HINT, server_installed

        self.ctx = ctx
        self.model = QtWidgets.QLineEdit(placeholderText=f"empty: the {DEMO_LABEL}")
        self.browse = QtWidgets.QPushButton("Model file…")
        self.start_button = QtWidgets.QPushButton("Start local judge")
        self.status = QtWidgets.QLabel()
        self.status.setWordWrap(True)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.model, 1)
        row.addWidget(self.browse)
        row.addWidget(self.start_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self.browse.clicked.connect(self._browse)
        self.start_button.clicked.connect(self.start)
        if not server_installed():
            self.start_button.setEnabled(False)
            from studio.core.paths import is_frozen  # the standalone app cannot take the extra

            self.status.setText(f"Not installed: {INSTALL_HINT}." if is_frozen()
                                else f"Not installed: {INSTALL_HINT}, then reopen Settings.")
        else:
            self.status.setText("Serves a GGUF model with llama-cpp-python on 127.0.0.1 and adds it "
                                "as the endpoint “local” (one request at a time, logprobs on).")
        app = QtWidgets.QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(stop_local_judges)

    def _browse(self) -> None:
        path = open_file(self, "Model file", "", "GGUF models (*.gguf)")
        if path:
            self.model.setText(path)

    def start(self, name: str = "local") -> None:
        from pathlib import Path

        from studio.core.judges.http.local_server import LocalJudgeServer
        from studio.core.store.endpoints import EndpointRepository

        if name in _RUNNING:
            _RUNNING.pop(name).stop()
        model = self.model.text().strip()
        from studio.core.store.location import default_path, is_server_url

        # the server's log beside the library file (a shared library's: beside the default one)
        db = default_path() if is_server_url(self.ctx.db_path) else Path(self.ctx.db_path)
        self.start_button.setEnabled(False)
        self.status.setText("Starting the llama.cpp server…")

        def work() -> LocalJudgeInfo:
            server = LocalJudgeServer(Path(model) if model else None, name=name,
                                      log=db.with_name(f"{name}-llama.log"))
            server.start()
            try:
                info = server.register(EndpointRepository.of(self.ctx.library).save)
            except BaseException:
                server.stop()
                raise
            _RUNNING[name] = server
            return info

        def done(info: LocalJudgeInfo) -> None:
            self.start_button.setEnabled(True)
            probe = info.probe
            lines = [f"✓ Endpoint “{info.endpoint.name}” at {info.endpoint.base_url}: {info.endpoint.label}.",
                     f"Answered in {probe.latency_ms:.0f} ms; logprobs "
                     f"{'supported' if probe.logprobs else 'not supported'}; structured output "
                     f"{probe.structured_output}; concurrency {info.endpoint.max_concurrency}.",
                     *probe.notes, *info.changes]
            self.status.setText("\n".join(lines))
            self.ctx.endpoints_changed.emit()
            self.registered.emit(info.endpoint.name)

        def failed(exc: BaseException) -> None:
            self.start_button.setEnabled(True)
            self.status.setText(f"✗ {describe_error(exc)}")

        self.ctx.tasks.run(work, done, failed)
