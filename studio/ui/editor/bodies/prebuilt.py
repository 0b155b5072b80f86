"""The pre-built RAG judge's designer: the metric picks the built-in templates shown when the
definition brings none."""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import JudgeBase, PrebuiltJudge

from ...qt import QtWidgets
from .judge import JudgeBody, _builtin_templates


class PrebuiltJudgeBody(JudgeBody):
    def _build_form(self) -> None:
        self.metric_type = QtWidgets.QComboBox()
        for value, label in (("faithfulness", "Faithfulness: claims supported by the context"),
                             ("context_relevancy", "Context relevancy: retrieved documents on topic"),
                             ("answer_relevancy", "Answer relevancy: statements address the question")):
            self.metric_type.addItem(label, value)
        self.form.addRow("Metric", self.metric_type)
        self.metric_type.currentIndexChanged.connect(self._metric_type_changed)

    def _metric_type_changed(self, _index: int) -> None:
        system, user = _builtin_templates(self.kind, self.metric_type.currentData())
        for field, text in (("system_template", system), ("user_template", user)):
            self.templates.builtins[field] = text
            self.templates.editors[field].setPlaceholderText("Empty: the judge's built-in template is used.\n\n" + text)
        self._emit_changed()

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, PrebuiltJudge)  # narrows the type: the kind's descriptor chose this body
        self.metric_type.setCurrentIndex(max(0, self.metric_type.findData(d.metric_type)))

    def _kind_values(self) -> JsonObject:
        return {"metric_type": self.metric_type.currentData()}

    def _set_kind_read_only(self, read_only: bool) -> None:
        self.metric_type.setEnabled(not read_only)


BODY = PrebuiltJudgeBody
