"""The letter-grade judge's designer (Inspect's model_graded_qa/fact): partial credit, history and the
grade pattern; its prompt is one ``str.format`` template edited on the right, with the grading
instructions (empty: the default ones for the partial-credit choice)."""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import JudgeBase, LetterJudge

from ...qt import QtWidgets
from .judge import JudgeBody


class LetterJudgeBody(JudgeBody):
    def _build_form(self) -> None:
        self.partial_credit = QtWidgets.QCheckBox("Offer P (partial credit, 0.5)")
        self.include_history = QtWidgets.QCheckBox("Show the whole conversation as the question")
        self.grade_pattern = QtWidgets.QLineEdit()
        self.grade_pattern.setPlaceholderText("empty: the word after the last GRADE:")
        self.form.addRow("Grades", self.partial_credit)
        self.form.addRow("Question", self.include_history)
        self.form.addRow("Grade pattern", self.grade_pattern)
        self.partial_credit.toggled.connect(self._emit_changed)
        self.include_history.toggled.connect(self._emit_changed)
        self.grade_pattern.textChanged.connect(self._emit_changed)

    def _configure_templates(self, variables: list[tuple[str, str]]) -> None:
        self.templates.configure([("template", "Prompt", ""), ("instructions", "Instructions", "")],
                                 variables, "format")

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, LetterJudge)  # narrows the type: the kind's descriptor chose this body
        self.partial_credit.setChecked(d.partial_credit)
        self.include_history.setChecked(d.include_history)
        self.grade_pattern.setText(d.grade_pattern or "")

    def _kind_values(self) -> JsonObject:
        return dict(partial_credit=self.partial_credit.isChecked(), include_history=self.include_history.isChecked(),
                    grade_pattern=self.grade_pattern.text() or None)

    def _set_kind_read_only(self, read_only: bool) -> None:
        for widget in (self.partial_credit, self.include_history):
            widget.setEnabled(not read_only)
        self.grade_pattern.setReadOnly(read_only)

    def _load_templates(self, d: JudgeBase) -> None:
        assert isinstance(d, LetterJudge)  # narrows the type: the kind's descriptor chose this body
        self.templates.set_text("template", d.template)
        self.templates.set_text("instructions", d.instructions)

    def _template_values(self) -> JsonObject:
        return dict(template=self.templates.text("template") or "", instructions=self.templates.text("instructions"))


BODY = LetterJudgeBody
