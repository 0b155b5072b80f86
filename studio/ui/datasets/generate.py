"""Datasets ▸ Generate outputs…: call the model under test on a dataset's inputs (``grader-studio
generate`` in the window).

The generation runs as a background task (engine/generate.py: answers written as they arrive); its
progress, rate and cost come back through a queued signal. Cancel stops handing out calls, waits for
the ones in flight and keeps every answer; the new dataset then opens with its provenance shown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject

from ..context import AppContext
from ..messages import Messages, describe_error
from ..qt import QObject, Qt, QtWidgets, Signal

if TYPE_CHECKING:
    from studio.core.engine.generate import GenerationProgress, GenerationResult, GenerationSettings
    from studio.core.store.endpoint_trust import Pending


class _Relay(QObject):
    """Carries progress from the generation's thread to the GUI thread (a queued signal)."""

    progressed = Signal(object)


def progress_text(progress: GenerationProgress) -> str:
    from studio.core.engine.usage import format_usd

    parts = [f"{progress.stored:,} of {progress.planned:,} answers", f"{progress.rate:.1f} a second",
             f"{progress.tally.tokens:,} tokens"]
    if progress.cost is not None:
        parts.append(format_usd(progress.cost))
    if progress.errors:
        parts.append(f"{progress.errors} failed")
    return " · ".join(parts)


def provenance_text(provenance: JsonObject | None) -> str:
    """Where a generated dataset's completions came from, in a line or two ("" for an imported one)."""
    if not provenance or provenance.get("kind") != "generated":
        return ""
    from fractions import Fraction

    from studio.core.engine.usage import format_usd

    params = provenance.get("parameters") or {}
    settings = [f"{k.replace('_', ' ')} {params[k]}" for k in ("temperature", "max_tokens", "samples", "limit")
                if params.get(k) is not None and not (k == "samples" and params[k] == 1)]
    if params.get("system"):
        settings.append("own system prompt")
    label = f" — {provenance['endpoint_label']}" if provenance.get("endpoint_label") else ""
    cost = provenance.get("cost_usd")
    lines = [
        f"Generated from {provenance.get('source_dataset')} by endpoint {provenance.get('endpoint')}, "
        f"model {provenance.get('model')}{label}",
        f"{provenance.get('status')} · {provenance.get('stored', '?')} of {provenance.get('planned', '?')} answers · "
        f"{provenance.get('calls', 0):,} calls · "
        f"{int(provenance.get('prompt_tokens') or 0) + int(provenance.get('completion_tokens') or 0):,} tokens"
        + (f" · {format_usd(Fraction(cost))}" if cost is not None else "")
        + (f" · {', '.join(settings)}" if settings else "")
        + f" · started {provenance.get('started_at')}",
    ]
    return "\n".join(lines)


class GenerateDialog(QtWidgets.QDialog):
    """Source dataset, endpoint, model, system prompt and limit; Generate, then progress and Cancel."""

    #: the generated dataset's name, once the generation ended (complete, cancelled or stopped)
    generated = Signal(str)

    def __init__(self, ctx: AppContext, source: str | None = None, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle("Generate outputs")
        self.cancel_event: threading.Event | None = None
        self.generation: GenerationResult | None = None  # not ``result``: that is QDialog.result(), the dialog code
        #: asks before the key goes to an endpoint a teammate changed (the window's Messages)
        self.approve_endpoint: Callable[[Pending], bool] = Messages(self).approve_endpoint
        self._launched: tuple[str, GenerationSettings | None, bool] | None = None
        self.relay = _Relay(self)
        self.relay.progressed.connect(self._on_progress)

        self.source = QtWidgets.QComboBox()
        self.source.addItems([d.name for d in ctx.library.datasets.list()])
        if source is not None:
            self.source.setCurrentText(source)
        self.endpoint = QtWidgets.QComboBox()
        self.endpoint.addItems(ctx.endpoint_names())
        self.model = QtWidgets.QLineEdit()
        self.system = QtWidgets.QPlainTextEdit()
        self.system.setPlaceholderText("empty: each sample's own system turn")
        self.system.setFixedHeight(self.fontMetrics().height() * 5)
        self.limit = QtWidgets.QSpinBox()
        self.limit.setRange(0, 10_000_000)
        self.limit.setSpecialValueText("all samples")
        self.name = QtWidgets.QLineEdit()
        form = QtWidgets.QFormLayout()
        form.addRow("Inputs from dataset", self.source)
        form.addRow("Model under test (endpoint)", self.endpoint)
        form.addRow("Model", self.model)
        form.addRow("System prompt", self.system)
        form.addRow("Limit", self.limit)
        form.addRow("New dataset", self.name)

        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = QtWidgets.QLabel("Each sample's input turns go to the endpoint; its answers become "
                                       "a new dataset.")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.generate_button = QtWidgets.QPushButton("Generate")
        self.generate_button.setDefault(True)
        # an unfinished generation (cancelled, stopped, calls failed) continues here: the CLI's --resume
        self.resume_button = QtWidgets.QPushButton("Resume")
        self.resume_button.setToolTip("Continue the unfinished generation into the dataset named above, as it "
                                      "was started: only the answers not stored yet are asked for")
        self.resume_button.hide()
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop starting calls; the answers already generated are kept")
        self.cancel_button.setEnabled(False)
        self.close_button = QtWidgets.QPushButton("Close")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.resume_button, self.generate_button, self.cancel_button, self.close_button):
            buttons.addWidget(button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

        self.generate_button.clicked.connect(self.start)
        self.resume_button.clicked.connect(self.resume)
        self.name.textChanged.connect(self._offer_resume)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.reject)
        self.source.currentTextChanged.connect(self._suggest)
        self.endpoint.currentTextChanged.connect(self._suggest)
        self._suggest()
        if not self.endpoint.count():
            self.generate_button.setEnabled(False)
            self.status.setText("No endpoint yet: add the model under test as an endpoint in Settings "
                                "(or `grader-studio endpoints add`).")

    def _suggest(self) -> None:
        """The endpoint's model as a placeholder, and SOURCE-ENDPOINT (or its first free variant) as
        the new dataset's name."""
        from studio.core.engine.generate import proposed_name
        from studio.core.store.errors import NotFound

        try:
            self.model.setPlaceholderText(f"the endpoint's: {self.ctx.library.endpoints.get(self.endpoint.currentText()).model}")
        except NotFound:
            self.model.setPlaceholderText("")
        if not self.name.isModified():  # never a name that exists: Generate would be refused
            self.name.setText(proposed_name(self.ctx.library, self.source.currentText(), self.endpoint.currentText()))

    @property
    def running(self) -> bool:
        return self.cancel_event is not None

    def _unfinished(self, name: str) -> bool:
        """Whether ``name`` is a generated dataset whose generation did not complete."""
        from studio.core.store.errors import NotFound

        try:
            provenance = self.ctx.library.datasets.get(name).provenance or {}
        except NotFound:
            return False
        return provenance.get("kind") == "generated" and provenance.get("status") != "complete"

    def _offer_resume(self, *_: object) -> None:
        self.resume_button.setVisible(not self.running and self._unfinished(self.name.text().strip()))

    def resume(self) -> None:
        """Continue the generation of the dataset named, with the settings it was started with."""
        name = self.name.text().strip()
        if not self._unfinished(name):
            self.status.setText(f"“{name}” is not an unfinished generation: there is nothing to resume.")
            return
        self._launch(name, None, resume=True)

    def start(self) -> None:
        from pydantic import ValidationError

        from studio.core.engine.generate import GenerationSettings

        try:
            settings = GenerationSettings(
                source=self.source.currentText(), endpoint=self.endpoint.currentText(),
                model=self.model.text().strip() or None, system=self.system.toPlainText().strip() or None,
                limit=self.limit.value() or None)
        except ValidationError as exc:
            self.status.setText(str(exc.errors()[0]["msg"]))
            return
        name = self.name.text().strip()
        if not name:
            self.status.setText("Name the new dataset.")
            return
        self._launch(name, settings)

    def _launch(self, name: str, settings: GenerationSettings | None, resume: bool = False) -> None:
        from studio.core.engine.generate import generate

        cancel = self.cancel_event = threading.Event()
        self._launched = (name, settings, resume)
        relay = self.relay
        library = self.ctx.library
        for widget in (self.source, self.endpoint, self.model, self.system, self.limit, self.name,
                       self.generate_button, self.resume_button, self.close_button):
            widget.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText("Resuming…" if resume else "Generating…")

        def work() -> GenerationResult:
            return generate(library, name, settings, resume=resume, cancel=cancel, on_progress=relay.progressed.emit)

        self.ctx.tasks.run(work, self._on_done, self._on_error)

    def cancel(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()
            self.cancel_button.setEnabled(False)
            self.status.setText("Cancelling: waiting for the calls in flight; every answer is kept…")

    def _on_progress(self, progress: GenerationProgress) -> None:
        self.progress.setRange(0, max(1, progress.planned))
        self.progress.setValue(progress.stored)
        if self.cancel_event is not None and not self.cancel_event.is_set():
            self.status.setText(progress_text(progress))

    def _finish(self) -> None:
        self.cancel_event = None
        self.cancel_button.setEnabled(False)
        for widget in (self.source, self.endpoint, self.model, self.system, self.limit, self.name,
                       self.generate_button, self.resume_button, self.close_button):
            widget.setEnabled(True)
        self._offer_resume()

    def _on_done(self, result: GenerationResult) -> None:
        from studio.core.engine.usage import format_usd

        self._finish()
        self.generation = result
        self.progress.setRange(0, max(1, result.planned))
        self.progress.setValue(result.stored)
        cost = "" if result.cost is None else f", {format_usd(result.cost)}"
        text = (f"Generation {result.status}: {result.stored:,} of {result.planned:,} answers in "
                f"“{result.dataset}” ({result.tally.calls:,} calls, {result.tally.tokens:,} tokens{cost}).")
        if result.reason:
            text += f" {result.reason[:1].upper()}{result.reason[1:]}."
        if result.status != "complete":
            text += " Press Resume to finish it (only the missing answers are asked for)."
        elif not self.name.isModified():
            self._suggest()  # the name is taken now: the next generation gets a free one
        if result.errors:
            text += f" Failed calls, e.g.: {result.errors[0]}"
        self.status.setText(text)
        self.ctx.datasets_changed.emit()
        self.generated.emit(result.dataset)

    def _on_error(self, exc: BaseException) -> None:
        from ..dialogs.endpoint_trust import approved_now

        self._finish()
        self.status.setText(describe_error(exc))
        self.ctx.datasets_changed.emit()
        if self._launched is not None and approved_now(self.approve_endpoint, exc):
            self._launch(*self._launched)  # approved: now the key may go there

    def reject(self) -> None:
        if self.running:  # closing mid-way cancels (answers kept) rather than leaving a task behind
            self.cancel()
            return
        super().reject()
