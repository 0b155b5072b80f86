"""Editors for the kinds without a designer: a generated form (builtin, bash, external endpoint) and
the definition file itself in a YAML editor (composite), with problems marked on their lines."""

from __future__ import annotations

from studio.core.checks import Check
from studio.core.errors import StudioError
from studio.core.json_types import JsonObject
from studio.core.models import GraderDefinition, model_for
from studio.core.models import files as definition_files
from studio.core.models.common import GraderBase

from ...forms.fields import ModelFields
from ...qt import Qt, QtWidgets
from ..body import CommonFields, DefinitionBody
from ..code_editor import CodeEditor
from ..find_bar import FindBar

_COMMON = set(GraderBase.model_fields) | {"kind"}


class FormBody(DefinitionBody):
    def __init__(self, kind: str, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.common = CommonFields()
        self.fields = ModelFields(model_for(kind), skip=_COMMON)
        inner = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(inner)
        details = QtWidgets.QGroupBox("Grader")
        QtWidgets.QVBoxLayout(details).addWidget(self.common)
        settings = QtWidgets.QGroupBox("Settings")
        QtWidgets.QVBoxLayout(settings).addWidget(self.fields)
        column.addWidget(details)
        column.addWidget(settings)
        column.addStretch(1)
        inner.setMaximumWidth(820)
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        self.common.changed.connect(self._emit_changed)
        self.fields.changed.connect(self._emit_changed)

    def _load(self, definition: GraderDefinition) -> None:
        self.common.load(definition)
        self.fields.load(definition.model_dump(mode="json"))

    def values(self) -> JsonObject:
        return {**self.common.values(), **self.fields.values()}

    def set_read_only(self, read_only: bool) -> None:
        self.common.set_read_only(read_only)
        self.fields.set_read_only(read_only)


class YamlBody(DefinitionBody):
    """The whole definition file; the key cannot change here (Duplicate makes a new key)."""

    def __init__(self, theme: str = "light", parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = CodeEditor("yaml", theme)
        self.find_bar = FindBar(self.editor)
        hint = QtWidgets.QLabel("The definition file (schema_version 1). Problems are marked on their lines when you validate or save.")
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(hint)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.find_bar)
        self.editor.textChanged.connect(self._emit_changed)

    def _load(self, definition: GraderDefinition) -> None:
        self.editor.set_text(definition_files.to_yaml(definition))
        self.editor.set_markers({})

    def definition(self) -> GraderDefinition:
        assert self._loaded is not None
        try:
            parsed = definition_files.loads(self.editor.toPlainText(), "definition")
        except definition_files.DefinitionError as exc:
            self.editor.set_markers({line: ("error", f"{field}: {message}" if field else message)
                                     for line, field, message in exc.problems if line is not None})
            raise
        if parsed.key != self._loaded.key:
            raise StudioError(f"the key cannot change from “{self._loaded.key}” here; use Duplicate to make a copy under a new key")
        self.editor.set_markers({})
        return parsed

    def values(self) -> JsonObject:
        return {}

    def set_read_only(self, read_only: bool) -> None:
        self.editor.setReadOnly(read_only)

    def show_checks(self, checks: list[Check]) -> None:
        self.editor.set_markers({c.line: ("error" if c.status == "failed" else "warning", c.message)
                                 for c in checks if c.line is not None and c.status in ("failed", "warning")})

    def code_editor(self) -> CodeEditor:
        return self.editor
