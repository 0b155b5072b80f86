"""New grader: a key, a name, and what to start from (a kind's starter or a shipped example)."""

from __future__ import annotations

import re

from studio.core.graders.registry import kind_labels
from studio.core.models import GraderDefinition
from studio.core.models.common import SLUG_PATTERN

from ..qt import QtWidgets
from .starters import from_template, starter, templates


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-._")[:128]


class NewGraderDialog(QtWidgets.QDialog):
    def __init__(self, taken: set[str], parent: QtWidgets.QWidget | None = None, kind: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New grader")
        self.taken = taken
        self.name = QtWidgets.QLineEdit(placeholderText="Answer is correct")
        self.key = QtWidgets.QLineEdit(placeholderText="answer-is-correct")
        self.kind = QtWidgets.QComboBox()
        names = list(kind_labels())
        for k, label in kind_labels().items():
            self.kind.addItem(label, k)
        if kind in names:
            self.kind.setCurrentIndex(names.index(kind))
        self.template = QtWidgets.QComboBox()
        self.template.addItem("(none: start from the kind's starter)", None)
        for label, path in templates().items():
            self.template.addItem(label, str(path))
        self.problem = QtWidgets.QLabel()
        self.problem.setObjectName("error")
        form = QtWidgets.QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Key", self.key)
        form.addRow("Kind", self.kind)
        form.addRow("Or copy example", self.template)
        self.buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Ok | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setText("Create")
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self._key_edited = False
        self.name.textEdited.connect(self._name_edited)
        self.key.textEdited.connect(self._on_key_edited)
        self.template.currentIndexChanged.connect(lambda _i: self.kind.setEnabled(self.template.currentData() is None))
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.resize(440, 0)

    def _name_edited(self, text: str) -> None:
        if not self._key_edited:
            self.key.setText(slugify(text))

    def _on_key_edited(self, _text: str) -> None:
        self._key_edited = True

    def problem_text(self) -> str:
        key = self.key.text().strip()
        if not re.match(SLUG_PATTERN, key):
            return "The key must be lowercase letters, digits, '-', '_' or '.', starting with a letter or digit."
        if key in self.taken:
            return f"A grader with key “{key}” already exists."
        return ""

    def _accept(self) -> None:
        problem = self.problem_text()
        self.problem.setText(problem)
        if not problem:
            self.accept()

    def definition(self) -> GraderDefinition:
        key, name = self.key.text().strip(), self.name.text().strip()
        path = self.template.currentData()
        if path:
            from pathlib import Path

            return from_template(Path(path), key, name)
        return starter(self.kind.currentData(), key, name)
