"""The judge designer's shared body: endpoint, grader fields, the template editor, and a live preview
of the exact prompt for a chosen sample, re-rendered as you type.

Each judge kind's own fields live in the body module named after the kind (``binary_judge.py``,
``range_judge.py``, ``rubric_judge.py``, ``criteria_judge.py``, ``prebuilt.py``), a subclass that fills
in the hooks below; ``make_body`` finds it from the kind."""

from __future__ import annotations

from typing import Any

from studio.core.graders.registry import get_kind
from studio.core.models import GraderDefinition, JudgeBase

from ...context import AppContext
from ...judges.preview import PreviewPane
from ...judges.templates import SAMPLE_VARIABLES, TemplateEditor
from ...qt import Qt, QTimer, QtWidgets
from ..body import CommonFields, DefinitionBody
from ..code_editor import CodeEditor

PREVIEW_DELAY_MS = 200


def _builtin_templates(kind: str, metric_type: str = "faithfulness") -> tuple[str, str]:
    """The (system, user) templates a judge uses when its definition brings none."""
    defaults = get_kind(kind).default_templates
    return defaults(metric_type) if defaults is not None else ("", "")


class JudgeBody(DefinitionBody):
    """What every judge kind's designer shares; a kind's body subclasses it and adds its own fields."""

    def __init__(self, ctx: AppContext, kind: str, theme: str = "light", parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.kind = kind
        self.common = CommonFields()
        self.templates = TemplateEditor(theme)
        self.preview = PreviewPane(ctx)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PREVIEW_DELAY_MS)
        self._timer.timeout.connect(self.refresh_preview)

        # endpoint
        self.endpoint = QtWidgets.QComboBox()
        self.endpoint.setEditable(True)
        self.endpoint.setToolTip("Named endpoint from Settings; empty = the library's only endpoint")
        self.model = QtWidgets.QLineEdit(placeholderText="the endpoint's model")
        self.temperature = QtWidgets.QDoubleSpinBox(decimals=2, minimum=0.0, maximum=2.0, singleStep=0.1)
        endpoint_box = QtWidgets.QGroupBox("Endpoint")
        endpoint_form = QtWidgets.QFormLayout(endpoint_box)
        endpoint_form.addRow("Endpoint", self.endpoint)
        endpoint_form.addRow("Model", self.model)
        endpoint_form.addRow("Temperature", self.temperature)

        judge_box = QtWidgets.QGroupBox("Judge")
        self.form = QtWidgets.QFormLayout(judge_box)
        self.form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._build_kind_form()

        grader_box = QtWidgets.QGroupBox("Grader")
        QtWidgets.QVBoxLayout(grader_box).addWidget(self.common)
        inner = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(inner)
        column.addWidget(judge_box)
        column.addWidget(endpoint_box)
        column.addWidget(grader_box)
        column.addStretch(1)
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)  # never clip a field
        scroll.setWidget(inner)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)

        right = QtWidgets.QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.templates)
        right.addWidget(self.preview)
        right.setSizes([300, 360])
        splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([max(inner.minimumSizeHint().width() + 24, 420), 520])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.common.changed.connect(self._emit_changed)
        self.templates.changed.connect(self._emit_changed)
        for signal in (self.endpoint.currentTextChanged, self.model.textChanged, self.temperature.valueChanged):
            signal.connect(self._emit_changed)
        self.changed.connect(self.schedule_preview)
        self.preview.picker.sample_changed.connect(self.schedule_preview)

    # -- the kind's form -----------------------------------------------------------------------------
    def _text(self, height: int = 96) -> QtWidgets.QPlainTextEdit:
        edit = QtWidgets.QPlainTextEdit()
        edit.setFixedHeight(height)
        edit.textChanged.connect(self._emit_changed)
        return edit

    def _build_kind_form(self) -> None:
        self._build_form()
        descriptor = get_kind(self.kind)
        variables = list(descriptor.variables) + (SAMPLE_VARIABLES if descriptor.sample_variables else [])
        self._configure_templates(variables)

    def _build_form(self) -> None:
        """Add the kind's own rows to ``self.form`` (each judge kind's body does)."""

    def _add_criteria_text(self) -> None:
        """The plain-words criteria box binary and range judges share."""
        self.criteria = self._text(110)
        self.criteria.setPlaceholderText("What a good answer does, in plain words")
        self.form.addRow("Criteria", self.criteria)

    def _configure_templates(self, variables: list[tuple[str, str]]) -> None:
        """A system and a user handlebars template, showing the built-in ones when left empty."""
        system, user = _builtin_templates(self.kind)
        self.templates.configure([("system_template", "System template", system),
                                  ("user_template", "User template", user)], variables, "handlebars")

    # -- body interface ------------------------------------------------------------------------------
    def _load(self, definition: GraderDefinition) -> None:
        assert isinstance(definition, JudgeBase)
        self.common.load(definition)
        names = self.ctx.endpoint_names()
        self.endpoint.clear()
        self.endpoint.addItem("")
        self.endpoint.addItems(names)
        self.endpoint.setCurrentText(definition.endpoint or "")
        self.model.setText(definition.model or "")
        self.temperature.setValue(definition.temperature)
        d: Any = definition
        self._load_kind(d)
        self._load_templates(d)
        self.schedule_preview()

    def values(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            **self.common.values(),
            "endpoint": self.endpoint.currentText().strip() or None,
            "model": self.model.text().strip() or None,
            "temperature": self.temperature.value(),
        }
        data.update(self._kind_values())
        data.update(self._template_values())
        return data

    def set_read_only(self, read_only: bool) -> None:
        self.common.set_read_only(read_only)
        self.templates.set_read_only(read_only)
        self.model.setReadOnly(read_only)
        for widget in (self.endpoint, self.temperature):
            widget.setEnabled(not read_only)
        self._set_kind_read_only(read_only)

    def code_editor(self) -> CodeEditor | None:
        return self.templates.current_editor()

    # -- what each judge kind's body adds ---------------------------------------------------------------
    def _load_kind(self, d: Any) -> None:
        """Show the kind's own fields of definition ``d``."""

    def _kind_values(self) -> dict[str, Any]:
        """The kind's own fields, as the definition spells them."""
        return {}

    def _set_kind_read_only(self, read_only: bool) -> None:
        """Lock or unlock the kind's own fields."""

    def _load_templates(self, d: Any) -> None:
        self.templates.set_text("system_template", d.system_template)
        self.templates.set_text("user_template", d.user_template)

    def _template_values(self) -> dict[str, Any]:
        return {"system_template": self.templates.text("system_template"),
                "user_template": self.templates.text("user_template")}

    # -- preview ---------------------------------------------------------------------------------------
    def schedule_preview(self) -> None:
        self._timer.start()

    def refresh_preview(self) -> None:
        self._timer.stop()
        self.preview.refresh(self.definition)


def _user_text(messages: list[Any]) -> str:
    return "\n".join(m.content for m in messages if m.role == "user")


def _messages(text: Any) -> list[dict[str, str]]:
    return [{"role": "user", "content": str(text)}] if str(text).strip() else []
