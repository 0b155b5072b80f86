"""A form built from a pydantic model's fields: the editor for the simple grader kinds.

Each field type gets the obvious widget (text, number, check box, choice, one-per-line list, a group
for a nested model); ``values()`` returns plain data for ``parse_grader`` to validate, so the model
stays the one place that knows the rules.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Mapping
from typing import Literal, Union, get_args, get_origin

from pydantic import BaseModel

from ..qt import QtWidgets, Signal

MULTILINE = {"command", "source", "prompt", "criteria", "system_prompt", "description"}


def _unwrap(annotation: object) -> tuple[object, bool]:
    """A field's type without its ``| None``, and whether it had one."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


class _Field:
    def __init__(self, name: str, annotation: object, default: object, description: str | None,
                 changed: Callable[..., object]) -> None:
        self.name = name
        self.kind, self.optional = _unwrap(annotation)
        self.default = default
        kind = self.kind
        origin = get_origin(kind)
        if origin is Literal:
            combo = QtWidgets.QComboBox()
            if self.optional:
                combo.addItem("(default)", None)
            for value in get_args(kind):
                combo.addItem(str(value), value)
            combo.currentIndexChanged.connect(changed)
            self.widget: QtWidgets.QWidget = combo
        elif kind is bool and self.optional:
            combo = QtWidgets.QComboBox()
            for label, value in (("(default)", None), ("yes", True), ("no", False)):
                combo.addItem(label, value)
            combo.currentIndexChanged.connect(changed)
            self.widget = combo
        elif kind is bool:
            box = QtWidgets.QCheckBox()
            box.toggled.connect(changed)
            self.widget = box
        elif kind in (int, float) and not self.optional:
            spin: QtWidgets.QAbstractSpinBox
            if kind is int:
                spin = QtWidgets.QSpinBox()
                spin.setRange(-1_000_000_000, 1_000_000_000)
            else:
                spin = QtWidgets.QDoubleSpinBox()
                spin.setDecimals(3)
                spin.setRange(-1e9, 1e9)
            spin.valueChanged.connect(changed)
            self.widget = spin
        elif origin is list and get_args(kind) and get_args(kind)[0] is str:
            edit = QtWidgets.QPlainTextEdit()
            edit.setPlaceholderText("one per line")
            edit.setFixedHeight(72)
            edit.textChanged.connect(changed)
            self.widget = edit
        elif isinstance(kind, type) and issubclass(kind, BaseModel):
            self.widget = ModelFields(kind)
            self.widget.changed.connect(changed)
        elif kind is str and name in MULTILINE:
            edit = QtWidgets.QPlainTextEdit()
            edit.setFixedHeight(96)
            edit.textChanged.connect(changed)
            self.widget = edit
        else:
            line = QtWidgets.QLineEdit()
            if self.optional:
                line.setPlaceholderText("(default)")
            line.textChanged.connect(changed)
            self.widget = line
        if description:
            self.widget.setToolTip(description)

    def set(self, value: object) -> None:
        w = self.widget
        if isinstance(w, QtWidgets.QComboBox):
            index = w.findData(value)
            w.setCurrentIndex(max(0, index))
        elif isinstance(w, QtWidgets.QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QtWidgets.QSpinBox):
            w.setValue(value if isinstance(value, int) else 0)
        elif isinstance(w, QtWidgets.QDoubleSpinBox):
            w.setValue(value if isinstance(value, int | float) else 0.0)
        elif isinstance(w, ModelFields):
            w.load(value if isinstance(value, dict) else (value.model_dump() if isinstance(value, BaseModel) else {}))
        elif isinstance(w, QtWidgets.QPlainTextEdit):
            if isinstance(value, list):
                w.setPlainText("\n".join(str(v) for v in value))
            else:
                w.setPlainText("" if value is None else str(value))
        elif isinstance(w, QtWidgets.QLineEdit):
            w.setText("" if value is None else (value if isinstance(value, str) else json.dumps(value)))

    def get(self) -> object:
        """The widget's value as the model's field takes it (a variant: the field's type decides)."""
        w = self.widget
        if isinstance(w, QtWidgets.QComboBox):
            return w.currentData()
        if isinstance(w, QtWidgets.QCheckBox):
            return w.isChecked()
        if isinstance(w, (QtWidgets.QSpinBox, QtWidgets.QDoubleSpinBox)):
            return w.value()
        if isinstance(w, ModelFields):
            return w.values()
        if isinstance(w, QtWidgets.QPlainTextEdit):
            text = w.toPlainText()
            if get_origin(self.kind) is list:
                return [line.strip() for line in text.splitlines() if line.strip()]
            return text
        text = w.text()  # type: ignore[attr-defined]
        if text == "" and self.optional:
            return None
        if self.kind in (int, float):
            try:
                return int(text) if self.kind is int else float(text)
            except ValueError:
                return text  # let the model say what is wrong
        return text

    def set_read_only(self, read_only: bool) -> None:
        w = self.widget
        if isinstance(w, (QtWidgets.QLineEdit, QtWidgets.QPlainTextEdit, QtWidgets.QAbstractSpinBox)):
            w.setReadOnly(read_only)
        elif isinstance(w, ModelFields):
            w.set_read_only(read_only)
        else:
            w.setEnabled(not read_only)


class ModelFields(QtWidgets.QWidget):
    """Widgets for ``model``'s fields except ``skip``."""

    changed = Signal()

    def __init__(self, model: type[BaseModel], skip: set[str] | frozenset[str] = frozenset(),
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.fields: dict[str, _Field] = {}
        form = QtWidgets.QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for name, info in model.model_fields.items():
            if name in skip:
                continue
            field = _Field(name, info.annotation, info.default, info.description, lambda *_: self.changed.emit())
            self.fields[name] = field
            if isinstance(field.widget, ModelFields):
                box = QtWidgets.QGroupBox(_label(name))
                inner = QtWidgets.QVBoxLayout(box)
                inner.addWidget(field.widget)
                form.addRow(box)
            else:
                form.addRow(_label(name), field.widget)

    def load(self, data: Mapping[str, object]) -> None:
        """``data`` is a full ``model_dump`` (every field present)."""
        blocked = self.blockSignals(True)
        try:
            for name, field in self.fields.items():
                value = data.get(name)
                field.set(value)
        finally:
            self.blockSignals(blocked)

    def values(self) -> dict[str, object]:
        return {name: field.get() for name, field in self.fields.items()}

    def set_read_only(self, read_only: bool) -> None:
        for field in self.fields.values():
            field.set_read_only(read_only)
