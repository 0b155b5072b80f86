"""The judge designer's shared body: endpoint, grader fields, the template editor, and a live preview
of the exact prompt for a chosen sample, re-rendered as you type.

Each judge kind's own fields live in the body module named after the kind (``binary_judge.py``,
``range_judge.py``, ``rubric_judge.py``, ``criteria_judge.py``, ``prebuilt.py``), a subclass that fills
in the hooks below; ``make_body`` finds it from the kind."""

from __future__ import annotations

from studio.core.graders.registry import get_kind
from studio.core.json_types import JsonObject
from studio.core.kinds import Kind
from studio.core.models import GraderDefinition, JudgeBase
from studio.core.models.thread import Turn

from ...context import AppContext
from ...judges.lists import TableEditor
from ...judges.preview import PreviewPane
from ...judges.templates import SAMPLE_VARIABLES, TemplateEditor
from ...qt import Qt, QTimer, QtWidgets
from ..body import CommonFields, DefinitionBody
from ..code_editor import CodeEditor

PREVIEW_DELAY_MS = 200
EXAMPLES_HINT = ("Worked examples the judge reads before the answer it grades. Double-click one, or press "
                 "Edit…, to read and change it whole.")


def _builtin_templates(kind: str, metric_type: str = "faithfulness") -> tuple[str, str]:
    """The (system, user) templates a judge uses when its definition brings none."""
    defaults = _judge_kind(kind).default_templates
    return defaults(metric_type) if defaults is not None else ("", "")


def _judge_kind(kind: str) -> Kind:
    """A judge kind's descriptor with its prompt parts (``Kind``'s fields, which the ``GraderKind``
    protocol does not declare)."""
    descriptor = get_kind(kind)
    if not isinstance(descriptor, Kind):
        raise TypeError(f"kind {kind!r} has no prompt parts")
    return descriptor


class JudgeBody(DefinitionBody):
    """What every judge kind's designer shares; a kind's body subclasses it and adds its own fields."""

    #: the title of the page holding the kind's own form
    form_title = "Judge"

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
        self.model.setToolTip("The model the endpoint is asked for; empty: the endpoint's own")
        self.temperature = QtWidgets.QDoubleSpinBox(decimals=2, minimum=0.0, maximum=2.0, singleStep=0.1)
        endpoint_box = QtWidgets.QGroupBox("Endpoint")
        endpoint_form = QtWidgets.QFormLayout(endpoint_box)
        endpoint_form.addRow("Endpoint", self.endpoint)
        endpoint_form.addRow("Model", self.model)
        endpoint_form.addRow("Temperature", self.temperature)

        # each part of the designer has a page of its own beside the live preview (issue 24: one
        # scrolled column made the criteria, the examples and the preview fight for one screen)
        self.sections = QtWidgets.QTabWidget()
        self.sections.setDocumentMode(True)
        judge_page = QtWidgets.QWidget()
        self.form = QtWidgets.QFormLayout(judge_page)
        self.form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setRowWrapPolicy(QtWidgets.QFormLayout.RowWrapPolicy.WrapLongRows)
        self.sections.addTab(_scrolled(judge_page), self.form_title)
        self._build_kind_form()
        self.sections.addTab(self.templates, "Templates")
        grader_box = QtWidgets.QGroupBox("Grader")
        QtWidgets.QVBoxLayout(grader_box).addWidget(self.common)
        settings = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(settings)
        column.addWidget(endpoint_box)
        column.addWidget(grader_box)
        column.addStretch(1)
        index = self.sections.addTab(_scrolled(settings), "Settings")
        self.sections.setTabToolTip(index, "The endpoint, model and temperature; the grader's name, description, "
                                           "metric and tags")

        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sections)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(0, 11)
        self.splitter.setStretchFactor(1, 9)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([550, 450])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.common.changed.connect(self._emit_changed)
        self.templates.changed.connect(self._emit_changed)
        for signal in (self.endpoint.currentTextChanged, self.model.textChanged, self.temperature.valueChanged):
            signal.connect(self._emit_changed)
        self.changed.connect(self.schedule_preview)
        self.preview.picker.sample_changed.connect(self.schedule_preview)

    # -- the kind's form -----------------------------------------------------------------------------
    def _text(self, lines: int = 6) -> QtWidgets.QPlainTextEdit:
        """A text box at least ``lines`` lines tall that takes the page's spare height."""
        edit = QtWidgets.QPlainTextEdit()
        edit.setMinimumHeight(edit.fontMetrics().lineSpacing() * lines + 12)
        edit.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding)
        edit.textChanged.connect(self._emit_changed)
        return edit

    def _add_section(self, title: str, widget: QtWidgets.QWidget, hint: str = "") -> int:
        """A page of the designer's own (subranges, few-shot examples), before the templates."""
        page = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(page)
        column.setContentsMargins(6, 6, 6, 6)
        if hint:
            label = QtWidgets.QLabel(hint)
            label.setObjectName("hint")
            label.setWordWrap(True)
            column.addWidget(label)
        column.addWidget(widget, 1)
        index = self.sections.indexOf(self.templates)
        return self.sections.insertTab(index if index >= 0 else self.sections.count(), page, title)

    def _add_examples(self, table: TableEditor, hint: str) -> None:
        """The few-shot examples' page, its title counting them."""
        page_index = self._add_section("Examples", table, hint)
        page = self.sections.widget(page_index)
        assert page is not None  # the tab just inserted

        def count() -> None:
            index = self.sections.indexOf(page)
            self.sections.setTabText(index, f"Examples ({table.table.rowCount()})")

        table.changed.connect(count)
        table.counted = count  # type: ignore[attr-defined]  # set_rows emits nothing: loading calls it

    def _build_kind_form(self) -> None:
        self._build_form()
        descriptor = _judge_kind(self.kind)
        variables = list(descriptor.variables) + (SAMPLE_VARIABLES if descriptor.sample_variables else [])
        self._configure_templates(variables)

    def _build_form(self) -> None:
        """Add the kind's own rows to ``self.form`` (each judge kind's body does)."""

    def _add_criteria_text(self) -> None:
        """The plain-words criteria box binary and range judges share."""
        self.criteria = self._text(6)
        self.criteria.setPlaceholderText("What a good answer does, in plain words")
        self.form.addRow("Criteria", self.criteria)

    def _configure_templates(self, variables: list[tuple[str, str]]) -> None:
        """A system and a user handlebars template, showing the built-in ones when left empty."""
        system, user = _builtin_templates(self.kind)
        self.templates.configure([("system_template", "System template", system),
                                  ("user_template", "User template", user)], variables, "handlebars")

    # -- body interface ------------------------------------------------------------------------------
    def _load(self, definition: GraderDefinition) -> None:
        assert isinstance(definition, JudgeBase)  # narrows the type: the kind's descriptor chose this body
        self.common.load(definition)
        names = self.ctx.endpoint_names()
        self.endpoint.clear()
        self.endpoint.addItem("")
        self.endpoint.addItems(names)
        self.endpoint.setCurrentText(definition.endpoint or "")
        self.model.setText(definition.model or "")
        self.temperature.setValue(definition.temperature)
        self._load_kind(definition)
        for table in self.findChildren(TableEditor):
            counted = getattr(table, "counted", None)
            if counted is not None:
                counted()
        self._load_templates(definition)
        self.schedule_preview()

    def values(self) -> JsonObject:
        data: JsonObject = {
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
    def _load_kind(self, d: JudgeBase) -> None:
        """Show the kind's own fields of definition ``d``."""

    def _kind_values(self) -> JsonObject:
        """The kind's own fields, as the definition spells them."""
        return {}

    def _set_kind_read_only(self, read_only: bool) -> None:
        """Lock or unlock the kind's own fields."""

    def _load_templates(self, d: JudgeBase) -> None:
        self.templates.set_text("system_template", d.system_template)
        self.templates.set_text("user_template", d.user_template)

    def _template_values(self) -> JsonObject:
        return {"system_template": self.templates.text("system_template"),
                "user_template": self.templates.text("user_template")}

    # -- preview ---------------------------------------------------------------------------------------
    def schedule_preview(self) -> None:
        self._timer.start()

    def refresh_preview(self) -> None:
        self._timer.stop()
        self.preview.refresh(self.definition)


def _scrolled(widget: QtWidgets.QWidget) -> QtWidgets.QScrollArea:
    scroll = QtWidgets.QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
    scroll.setWidget(widget)
    return scroll


def _user_text(messages: list[Turn]) -> str:
    return "\n".join(m.content for m in messages if m.role == "user")


def _messages(text: object) -> list[dict[str, str]]:
    return [{"role": "user", "content": str(text)}] if str(text).strip() else []
