"""The pairwise judge's designer: the criteria and where answers A and B come from.

Both orders are always asked (the preview shows both calls); nothing here can turn the swap off,
because a verdict that changes under the swap is what the judge exists to catch.
"""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import JudgeBase
from studio.core.models.panels import PairwiseJudge

from ...qt import QtWidgets
from .judge import JudgeBody


class PairwiseJudgeBody(JudgeBody):
    def _build_form(self) -> None:
        self._add_criteria_text()
        self.answer_a = QtWidgets.QLineEdit(placeholderText="completion, or a metadata / row field")
        self.answer_b = QtWidgets.QLineEdit(placeholderText="completion, or a metadata / row field")
        self.form.addRow("Answer A from", self.answer_a)
        self.form.addRow("Answer B from", self.answer_b)
        for widget in (self.answer_a, self.answer_b):
            widget.textChanged.connect(self._emit_changed)

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, PairwiseJudge)  # narrows the type: the kind's descriptor chose this body
        self.criteria.setPlainText(d.criteria)
        self.answer_a.setText(d.answer_a)
        self.answer_b.setText(d.answer_b)

    def _kind_values(self) -> JsonObject:
        return {"criteria": self.criteria.toPlainText(), "answer_a": self.answer_a.text().strip(),
                "answer_b": self.answer_b.text().strip()}

    def _set_kind_read_only(self, read_only: bool) -> None:
        self.criteria.setReadOnly(read_only)
        self.answer_a.setReadOnly(read_only)
        self.answer_b.setReadOnly(read_only)


BODY = PairwiseJudgeBody
