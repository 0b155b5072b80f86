"""The live preview: the exact messages the judge would send for the chosen sample.

``render_prompt`` is pure and fast (compiled templates are cached), so it runs on the GUI thread;
the designer calls ``refresh`` from a debounced timer, never on every keystroke.
"""

from __future__ import annotations

from collections.abc import Callable

from studio.core.judges.render import RenderedPrompt, render_prompt
from studio.core.models import GraderDefinition

from ..context import AppContext
from ..editor.code_editor import monospace_font
from ..messages import describe_error
from ..qt import QtGui, QtWidgets, Signal
from ..samples import SamplePicker


class PreviewPane(QtWidgets.QWidget):
    refreshed = Signal()

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.picker = SamplePicker(ctx)
        title = QtWidgets.QLabel("Live preview")
        title.setObjectName("sectionTitle")
        self.problem = QtWidgets.QLabel()
        self.problem.setObjectName("error")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self.view = QtWidgets.QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setFont(monospace_font(9))
        self.view.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.WidgetWidth)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.picker)
        layout.addWidget(self.problem)
        layout.addWidget(self.view, 1)
        self.renderer = render_prompt
        self.last_text = ""

    def refresh(self, build: Callable[[], GraderDefinition]) -> None:
        sample = self.picker.sample()
        if sample is None:
            self._problem("Import a dataset, or pick “Write a sample by hand…”, to see the prompt.")
            return
        try:
            prompt = self.renderer(build(), sample)
        except Exception as exc:  # a half-typed template or form: say what, keep the last good text
            self._problem(describe_error(exc))
            return
        self.problem.hide()
        self._show(prompt)
        self.refreshed.emit()

    def _problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()
        self.refreshed.emit()

    def _show(self, prompt: RenderedPrompt) -> None:
        text = prompt.text()
        self.last_text = text
        bar = self.view.verticalScrollBar().value()
        self.view.setPlainText(text)
        cursor = QtGui.QTextCursor(self.view.document())
        header = QtGui.QTextCharFormat()
        header.setFontWeight(QtGui.QFont.Weight.Bold)
        header.setForeground(QtGui.QColor("#2563eb"))
        block = self.view.document().begin()
        while block.isValid():
            line = block.text()
            if line.startswith(("=== ", "--- ", "note: ")):
                cursor.setPosition(block.position())
                cursor.setPosition(block.position() + len(line), QtGui.QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(header)
            block = block.next()
        self.view.verticalScrollBar().setValue(bar)
