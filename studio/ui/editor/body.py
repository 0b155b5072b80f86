"""What every kind's editor implements, and the fields all kinds share (name, description, metric)."""

from __future__ import annotations

from studio.core.checks import Check
from studio.core.json_types import JsonObject
from studio.core.models import GraderDefinition, parse_grader
from studio.core.models.definition import dump_grader

from ..qt import QtCore, QtWidgets, Signal
from .code_editor import CodeEditor

DESCRIPTION_LINES = (3, 7)  # the description box grows with its text between these


class CommonFields(QtWidgets.QWidget):
    changed = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = QtWidgets.QLineEdit(placeholderText="Shown in the library (the key is used when empty)")
        self.description = QtWidgets.QPlainTextEdit()
        self.description.setPlaceholderText("What it checks and why; shown in tooltips and exports")
        # as tall as its text (3 to 7 lines): a description does not stop mid-line (issue 24)
        self.description.textChanged.connect(self._fit_description)
        self.description.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.description.installEventFilter(self)
        self._fit_description()
        self.metric_key = QtWidgets.QLineEdit()
        self.metric_key.setToolTip("The metric this grader writes (Adaptive metric key, MKA1 metric_id)")
        self.metric_kind = QtWidgets.QComboBox()
        self.metric_kind.addItems(["scalar", "bool"])
        self.tags = QtWidgets.QLineEdit(placeholderText="comma, separated")
        metric = QtWidgets.QHBoxLayout()
        metric.addWidget(self.metric_key, 1)
        metric.addWidget(self.metric_kind)
        form = QtWidgets.QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Name", self.name)
        form.addRow("Description", self.description)
        form.addRow("Metric", metric)
        form.addRow("Tags", self.tags)
        for signal in (self.name.textChanged, self.description.textChanged, self.metric_key.textChanged,
                       self.metric_kind.currentIndexChanged, self.tags.textChanged):
            signal.connect(lambda *_: self.changed.emit())

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802
        if watched is self.description and event.type() == QtCore.QEvent.Type.Resize:
            QtCore.QTimer.singleShot(0, self._fit_description)
        return super().eventFilter(watched, event)

    def _fit_description(self) -> None:
        edit = self.description
        lines = int(edit.document().documentLayout().documentSize().height())  # wrapped lines
        shown = min(max(lines, DESCRIPTION_LINES[0]), DESCRIPTION_LINES[1])
        margins = edit.contentsMargins()
        height = (edit.fontMetrics().lineSpacing() * shown + 2 * int(edit.document().documentMargin())
                  + margins.top() + margins.bottom() + 2 * edit.frameWidth())
        if edit.height() != height:
            edit.setFixedHeight(height)

    def load(self, definition: GraderDefinition) -> None:
        blocked = self.blockSignals(True)
        self.name.setText(definition.name)
        self.description.setPlainText(definition.description)
        self.metric_key.setText(definition.metric.key)
        self.metric_kind.setCurrentText(definition.metric.kind)
        self.tags.setText(", ".join(definition.tags))
        self.blockSignals(blocked)

    def values(self) -> JsonObject:
        return {
            "name": self.name.text().strip(),
            "description": self.description.toPlainText(),
            "metric": {"key": self.metric_key.text().strip() or "score", "kind": self.metric_kind.currentText()},
            "tags": [t.strip() for t in self.tags.text().split(",") if t.strip()],
        }

    def set_read_only(self, read_only: bool) -> None:
        for widget in (self.name, self.description, self.metric_key, self.tags):
            widget.setReadOnly(read_only)
        self.metric_kind.setEnabled(not read_only)


class DefinitionBody(QtWidgets.QWidget):
    """A kind's editor. ``definition()`` builds from the widgets and raises when that is not valid.

    Fields the widgets do not show (extractor, template variables ...) are carried over from the
    loaded definition, so editing in the form never drops them.
    """

    changed = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._loaded: GraderDefinition | None = None
        self._loading = False

    def _emit_changed(self, *_: object) -> None:
        if not self._loading:
            self.changed.emit()

    def load(self, definition: GraderDefinition) -> None:
        self._loaded = definition
        self._loading = True
        try:
            self._load(definition)
        finally:
            self._loading = False

    def _load(self, definition: GraderDefinition) -> None:
        raise NotImplementedError

    def values(self) -> JsonObject:
        """Kind-specific fields, plain data."""
        raise NotImplementedError

    def definition(self) -> GraderDefinition:
        assert self._loaded is not None
        data = dump_grader(self._loaded)
        data.update(self.values())
        return parse_grader(data)

    def set_read_only(self, read_only: bool) -> None:
        raise NotImplementedError

    def show_checks(self, checks: list[Check]) -> None:
        """Mark the lines checks name, where the body has lines."""

    def code_editor(self) -> CodeEditor | None:
        """The editor Ctrl+F and Go to line act on."""
        return None
