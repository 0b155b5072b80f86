"""The criteria judge's designer: a table of weighted criteria (a negative weight is a penalty)."""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import CriteriaJudge, JudgeBase

from ...judges.lists import TableEditor
from .judge import JudgeBody


class CriteriaJudgeBody(JudgeBody):
    form_title = "Criteria"

    def _build_form(self) -> None:
        self.criteria_table = TableEditor([("Criterion", "text"), ("Weight", "float")], defaults=["", 1.0],
                                          noun="criterion")
        self.criteria_table.footer.setText("A negative weight makes a criterion a penalty.")
        self.criteria_table.footer.setObjectName("hint")
        self.form.addRow(self.criteria_table)  # the page is titled Criteria: the table takes its width
        self.criteria_table.changed.connect(self._emit_changed)

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, CriteriaJudge)  # narrows the type: the kind's descriptor chose this body
        self.criteria_table.set_rows([[c.text, c.weight] for c in d.criteria])

    def _kind_values(self) -> JsonObject:
        return {"criteria": [{"text": r[0], "weight": r[1]} for r in self.criteria_table.rows() if r[0]]}

    def _set_kind_read_only(self, read_only: bool) -> None:
        self.criteria_table.set_read_only(read_only)


BODY = CriteriaJudgeBody
