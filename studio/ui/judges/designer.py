"""The judge designer: forms for binary, range, rubric, criteria and pre-built judges, the template
editor, and a live preview of the exact prompt for a chosen sample, re-rendered as you type."""

from __future__ import annotations

from typing import Any

from studio.core.judges import prompts
from studio.core.judges.prebuilt import METRICS
from studio.core.models import GraderDefinition, JudgeBase

from ..context import AppContext
from ..editor.body import CommonFields, DefinitionBody
from ..editor.code_editor import CodeEditor
from ..qt import Qt, QTimer, QtWidgets
from .lists import StepsEditor, TableEditor
from .preview import PreviewPane
from .templates import KIND_VARIABLES, SAMPLE_VARIABLES, TemplateEditor

PREVIEW_DELAY_MS = 200


def _builtin_templates(kind: str, metric_type: str = "faithfulness") -> tuple[str, str]:
    """The (system, user) templates a judge uses when its definition brings none."""
    if kind == "binary_judge":
        return prompts.BINARY_SYSTEM, prompts.CONVERSATION_BLOCK
    if kind == "range_judge":
        return prompts.RANGE_SYSTEM, prompts.CONVERSATION_BLOCK
    if kind == "criteria_judge":
        return prompts.CRITERION_SYSTEM, prompts.CRITERION_USER
    if kind == "prebuilt" and metric_type in METRICS:
        _name, system, user, *_ = METRICS[metric_type]
        return system, user
    return "", ""


class JudgeBody(DefinitionBody):
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
        kind = self.kind
        if kind in ("binary_judge", "range_judge"):
            self.criteria = self._text(110)
            self.criteria.setPlaceholderText("What a good answer does, in plain words")
            self.form.addRow("Criteria", self.criteria)
        if kind == "range_judge":
            self.low = QtWidgets.QSpinBox(minimum=-100, maximum=100)
            self.high = QtWidgets.QSpinBox(minimum=-100, maximum=100)
            rng = QtWidgets.QHBoxLayout()
            rng.addWidget(self.low)
            rng.addWidget(QtWidgets.QLabel("to"))
            rng.addWidget(self.high)
            rng.addStretch(1)
            self.normalize = QtWidgets.QCheckBox("Normalise the score to 0–1")
            self.steps = StepsEditor()
            self.subranges = TableEditor([("Min", "int"), ("Max", "int"), ("Expectation", "text")],
                                         defaults=[1, 1, "What an answer at this score looks like"])
            self.shots = TableEditor([("User", "text"), ("Completion", "text"), ("Reasoning", "text"), ("Score", "int")],
                                     defaults=["", "", "", 1])
            self.form.addRow("Score range", rng)
            self.form.addRow("", self.normalize)
            self.form.addRow("Evaluation steps", self.steps)
            self.form.addRow("Subranges", self.subranges)
            self.form.addRow("Few-shot examples", self.shots)
            for signal in (self.low.valueChanged, self.high.valueChanged, self.normalize.toggled,
                           self.steps.changed, self.subranges.changed, self.shots.changed):
                signal.connect(self._emit_changed)
            for signal in (self.low.valueChanged, self.high.valueChanged, self.subranges.changed):
                signal.connect(self._update_coverage)
        elif kind == "binary_judge":
            self.shots = TableEditor([("User", "text"), ("Completion", "text"), ("Reasoning", "text"),
                                      ("Verdict", "choice:PASS|FAIL|NA")], defaults=["", "", "", "PASS"])
            self.form.addRow("Few-shot examples", self.shots)
            self.shots.changed.connect(self._emit_changed)
        elif kind == "criteria_judge":
            self.criteria_table = TableEditor([("Criterion", "text"), ("Weight", "float")], defaults=["", 1.0])
            self.criteria_table.footer.setText("A negative weight makes a criterion a penalty.")
            self.criteria_table.footer.setObjectName("hint")
            self.form.addRow("Criteria", self.criteria_table)
            self.criteria_table.changed.connect(self._emit_changed)
        elif kind == "rubric_judge":
            self.provider = QtWidgets.QComboBox()
            self.provider.addItems(["openai", "anthropic", "google"])
            self.max_retries = QtWidgets.QSpinBox(minimum=0, maximum=20)
            self.timeout = QtWidgets.QDoubleSpinBox(minimum=1, maximum=3600, suffix=" s")
            self.form.addRow("Provider", self.provider)
            self.form.addRow("Max retries", self.max_retries)
            self.form.addRow("Timeout", self.timeout)
            for signal in (self.provider.currentIndexChanged, self.max_retries.valueChanged, self.timeout.valueChanged):
                signal.connect(self._emit_changed)
            note = QtWidgets.QLabel("The rubric prompt is edited on the right; it must show {submission}.")
            note.setObjectName("hint")
            note.setWordWrap(True)
            self.form.addRow(note)
        elif kind == "prebuilt":
            self.metric_type = QtWidgets.QComboBox()
            for value, label in (("faithfulness", "Faithfulness: claims supported by the context"),
                                 ("context_relevancy", "Context relevancy: retrieved documents on topic"),
                                 ("answer_relevancy", "Answer relevancy: statements address the question")):
                self.metric_type.addItem(label, value)
            self.form.addRow("Metric", self.metric_type)
            self.metric_type.currentIndexChanged.connect(self._metric_type_changed)
        variables = KIND_VARIABLES.get(kind, []) + ([] if kind == "rubric_judge" else SAMPLE_VARIABLES)
        if kind == "rubric_judge":
            self.templates.configure([("prompt", "Rubric prompt", ""), ("system_prompt", "System prompt", "")],
                                     variables, "format")
        else:
            system, user = _builtin_templates(kind)
            self.templates.configure([("system_template", "System template", system),
                                      ("user_template", "User template", user)], variables, "handlebars")

    def _metric_type_changed(self, _index: int) -> None:
        system, user = _builtin_templates(self.kind, self.metric_type.currentData())
        for field, text in (("system_template", system), ("user_template", user)):
            self.templates.builtins[field] = text
            self.templates.editors[field].setPlaceholderText("Empty: the judge's built-in template is used.\n\n" + text)
        self._emit_changed()

    def _update_coverage(self, *_: object) -> None:
        low, high = self.low.value(), self.high.value()
        covered: set[int] = set()
        for row in self.subranges.rows():
            if isinstance(row[0], int) and isinstance(row[1], int):
                covered.update(range(row[0], row[1] + 1))
        gaps = [s for s in range(low, high + 1) if s not in covered]
        label = self.subranges.footer
        if not self.subranges.rows():
            label.setText("No subranges: optional, but they make scores consistent.")
            label.setObjectName("hint")
        elif gaps:
            label.setText(f"Not covered: {', '.join(map(str, gaps))}")
            label.setObjectName("warning")
        else:
            label.setText(f"Covers {low}–{high}.")
            label.setObjectName("ok")
        label.style().unpolish(label)
        label.style().polish(label)

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
        kind = self.kind
        if kind in ("binary_judge", "range_judge"):
            self.criteria.setPlainText(d.criteria)
        if kind == "range_judge":
            self.low.setValue(d.score_range[0])
            self.high.setValue(d.score_range[1])
            self.normalize.setChecked(d.normalize)
            self.steps.set_steps(d.evaluation_steps)
            self.subranges.set_rows([[s.min, s.max, s.expectation] for s in d.subrange_expectations])
            self.shots.set_rows([[_user_text(s.messages), s.completion, s.reasoning, s.score] for s in d.shots])
            self._update_coverage()
        elif kind == "binary_judge":
            self.shots.set_rows([[_user_text(s.messages), s.completion, s.reasoning, s.verdict] for s in d.examples])
        elif kind == "criteria_judge":
            self.criteria_table.set_rows([[c.text, c.weight] for c in d.criteria])
        elif kind == "rubric_judge":
            self.provider.setCurrentText(d.provider)
            self.max_retries.setValue(d.max_retries)
            self.timeout.setValue(d.timeout)
            self.templates.set_text("prompt", d.prompt)
            self.templates.set_text("system_prompt", d.system_prompt)
        elif kind == "prebuilt":
            self.metric_type.setCurrentIndex(max(0, self.metric_type.findData(d.metric_type)))
        if kind != "rubric_judge":
            self.templates.set_text("system_template", d.system_template)
            self.templates.set_text("user_template", d.user_template)
        self.schedule_preview()

    def values(self) -> dict[str, Any]:
        kind = self.kind
        data: dict[str, Any] = {
            **self.common.values(),
            "endpoint": self.endpoint.currentText().strip() or None,
            "model": self.model.text().strip() or None,
            "temperature": self.temperature.value(),
        }
        if kind in ("binary_judge", "range_judge"):
            data["criteria"] = self.criteria.toPlainText()
        if kind == "range_judge":
            data.update(
                score_range=[self.low.value(), self.high.value()],
                normalize=self.normalize.isChecked(),
                evaluation_steps=self.steps.steps(),
                subrange_expectations=[{"min": r[0], "max": r[1], "expectation": r[2]} for r in self.subranges.rows()],
                shots=[{"messages": _messages(r[0]), "completion": r[1], "reasoning": r[2], "score": r[3]}
                       for r in self.shots.rows()],
            )
        elif kind == "binary_judge":
            data["examples"] = [{"messages": _messages(r[0]), "completion": r[1], "reasoning": r[2], "verdict": r[3]}
                                for r in self.shots.rows()]
        elif kind == "criteria_judge":
            data["criteria"] = [{"text": r[0], "weight": r[1]} for r in self.criteria_table.rows() if r[0]]
        elif kind == "rubric_judge":
            data.update(provider=self.provider.currentText(), max_retries=self.max_retries.value(),
                        timeout=self.timeout.value(), prompt=self.templates.text("prompt") or "",
                        system_prompt=self.templates.text("system_prompt"))
        elif kind == "prebuilt":
            data["metric_type"] = self.metric_type.currentData()
        if kind != "rubric_judge":
            data["system_template"] = self.templates.text("system_template")
            data["user_template"] = self.templates.text("user_template")
        return data

    def set_read_only(self, read_only: bool) -> None:
        self.common.set_read_only(read_only)
        self.templates.set_read_only(read_only)
        self.model.setReadOnly(read_only)
        for widget in (self.endpoint, self.temperature):
            widget.setEnabled(not read_only)
        for name in ("criteria",):
            if hasattr(self, name):
                getattr(self, name).setReadOnly(read_only)
        for name in ("steps", "subranges", "shots", "criteria_table"):
            if hasattr(self, name):
                getattr(self, name).set_read_only(read_only)
        for name in ("low", "high", "normalize", "provider", "max_retries", "timeout", "metric_type"):
            if hasattr(self, name):
                getattr(self, name).setEnabled(not read_only)

    def code_editor(self) -> CodeEditor | None:
        return self.templates.current_editor()

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
