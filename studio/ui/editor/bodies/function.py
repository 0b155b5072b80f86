"""The function grader editor: the source in a code editor, the contract and limits beside it."""

from __future__ import annotations

from studio.core.checks import Check
from studio.core.json_types import JsonObject
from studio.core.models import CONTRACT_LABELS, MAX_SOURCE_BYTES, FunctionGrader, GraderDefinition

from ...qt import Qt, QtWidgets
from ..body import CommonFields, DefinitionBody
from ..code_editor import CodeEditor
from ..find_bar import FindBar


class FunctionBody(DefinitionBody):
    def __init__(self, theme: str = "light", parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = CodeEditor("python", theme)
        self.find_bar = FindBar(self.editor)
        self.size_label = QtWidgets.QLabel()
        self.size_label.setObjectName("hint")
        self.common = CommonFields()
        self.contract = QtWidgets.QComboBox()
        for value, label in CONTRACT_LABELS.items():
            self.contract.addItem(label, value)
            # the whole signature where a narrow editor elides it
            self.contract.setItemData(self.contract.count() - 1, label, Qt.ItemDataRole.ToolTipRole)
        self.function_name = QtWidgets.QLineEdit(placeholderText="the contract's default")
        self.timeout = QtWidgets.QDoubleSpinBox(suffix=" s", decimals=1, minimum=0.1, maximum=600)
        self.memory = QtWidgets.QSpinBox(suffix=" MB", minimum=32, maximum=16384, singleStep=64)
        self.model_access = QtWidgets.QCheckBox("Model calls through ctx (MKA1 model_backed)")
        self.max_model_calls = QtWidgets.QSpinBox(minimum=0, maximum=500)
        self.endpoint = QtWidgets.QLineEdit(placeholderText="library default")

        side = QtWidgets.QWidget()
        form = QtWidgets.QFormLayout(side)
        form.setContentsMargins(8, 0, 4, 0)
        form.addRow(self.common)
        form.addRow(_rule())
        form.addRow("Contract", self.contract)
        form.addRow("Entry point", self.function_name)
        form.addRow("Timeout", self.timeout)
        form.addRow("Memory", self.memory)
        form.addRow(self.model_access)
        form.addRow("Max model calls", self.max_model_calls)
        form.addRow("Endpoint", self.endpoint)
        side.setMinimumWidth(300)
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(side)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)

        left = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.editor, 1)
        column.addWidget(self.find_bar)
        column.addWidget(self.size_label)
        splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 1)
        splitter.setSizes([800, 380])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.editor.textChanged.connect(self._source_changed)
        self.common.changed.connect(self._emit_changed)
        for signal in (self.contract.currentIndexChanged, self.function_name.textChanged, self.timeout.valueChanged,
                       self.memory.valueChanged, self.model_access.toggled, self.max_model_calls.valueChanged,
                       self.endpoint.textChanged):
            signal.connect(self._emit_changed)

    def _source_changed(self) -> None:
        size = len(self.editor.toPlainText().encode("utf-8"))
        self.size_label.setText(f"  {size / 1024:.1f} KiB of {MAX_SOURCE_BYTES // 1024} KiB"
                                + ("  — too large to save" if size > MAX_SOURCE_BYTES else ""))
        if self.editor.markers():
            self.editor.set_markers({})  # stale once the text moves; Validate puts them back
        self._emit_changed()

    def _load(self, definition: GraderDefinition) -> None:
        assert isinstance(definition, FunctionGrader)  # narrows the type: the kind's descriptor chose this body
        self.common.load(definition)
        self.editor.set_text(definition.source)
        self.editor.set_markers({})
        self.contract.setCurrentIndex(max(0, self.contract.findData(definition.contract)))
        self.function_name.setText(definition.function_name or "")
        self.timeout.setValue(definition.timeout_seconds)
        self.memory.setValue(definition.memory_mb)
        self.model_access.setChecked(definition.model_access)
        self.max_model_calls.setValue(definition.max_model_calls)
        self.endpoint.setText(definition.endpoint or "")

    def values(self) -> JsonObject:
        return {
            **self.common.values(),
            "source": self.editor.toPlainText(),
            "contract": self.contract.currentData(),
            "function_name": self.function_name.text().strip() or None,
            "timeout_seconds": self.timeout.value(),
            "memory_mb": self.memory.value(),
            "model_access": self.model_access.isChecked(),
            "max_model_calls": self.max_model_calls.value(),
            "endpoint": self.endpoint.text().strip() or None,
        }

    def set_read_only(self, read_only: bool) -> None:
        self.editor.setReadOnly(read_only)
        self.common.set_read_only(read_only)
        for widget in (self.function_name, self.endpoint):
            widget.setReadOnly(read_only)
        for control in (self.contract, self.timeout, self.memory, self.model_access, self.max_model_calls):
            control.setEnabled(not read_only)

    def show_checks(self, checks: list[Check]) -> None:
        markers: dict[int, tuple[str, str]] = {}
        for check in checks:
            if check.line is not None and check.status in ("failed", "warning"):
                severity = "error" if check.status == "failed" else "warning"
                previous = markers.get(check.line)
                text = f"{check.name}: {check.message}"
                markers[check.line] = (severity if previous is None or previous[0] != "error" else "error",
                                       text if previous is None else f"{previous[1]}\n{text}")
        self.editor.set_markers(markers)

    def code_editor(self) -> CodeEditor:
        return self.editor


def _rule() -> QtWidgets.QFrame:
    line = QtWidgets.QFrame()
    line.setFrameShape(QtWidgets.QFrame.Shape.HLine)
    line.setFrameShadow(QtWidgets.QFrame.Shadow.Sunken)
    return line
