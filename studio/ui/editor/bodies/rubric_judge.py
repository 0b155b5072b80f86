"""The rubric judge's designer: provider, retries and timeout; its rubric and system prompts are
``str.format`` templates (not handlebars) edited on the right."""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import JudgeBase, RubricJudge

from ...qt import QtWidgets
from .judge import JudgeBody


class RubricJudgeBody(JudgeBody):
    def _build_form(self) -> None:
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

    def _configure_templates(self, variables: list[tuple[str, str]]) -> None:
        self.templates.configure([("prompt", "Rubric prompt", ""), ("system_prompt", "System prompt", "")],
                                 variables, "format")

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, RubricJudge)  # narrows the type: the kind's descriptor chose this body
        self.provider.setCurrentText(d.provider)
        self.max_retries.setValue(d.max_retries)
        self.timeout.setValue(d.timeout)

    def _kind_values(self) -> JsonObject:
        return dict(provider=self.provider.currentText(), max_retries=self.max_retries.value(),
                    timeout=self.timeout.value())

    def _set_kind_read_only(self, read_only: bool) -> None:
        for widget in (self.provider, self.max_retries, self.timeout):
            widget.setEnabled(not read_only)

    def _load_templates(self, d: JudgeBase) -> None:
        assert isinstance(d, RubricJudge)  # narrows the type: the kind's descriptor chose this body
        self.templates.set_text("prompt", d.prompt)
        self.templates.set_text("system_prompt", d.system_prompt)

    def _template_values(self) -> JsonObject:
        return dict(prompt=self.templates.text("prompt") or "", system_prompt=self.templates.text("system_prompt"))


BODY = RubricJudgeBody
