"""The binary judge's designer: criteria in plain words and PASS/FAIL/NA few-shot examples."""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import BinaryJudge, JudgeBase

from ...judges.lists import TableEditor
from .judge import EXAMPLES_HINT, JudgeBody, _messages, _user_text


class BinaryJudgeBody(JudgeBody):
    form_title = "Criteria"

    def _build_form(self) -> None:
        self._add_criteria_text()
        self.shots = TableEditor([("User", "text"), ("Completion", "text"), ("Reasoning", "text"),
                                  ("Verdict", "choice:PASS|FAIL|NA")], defaults=["", "", "", "PASS"], noun="example")
        self._add_examples(self.shots, EXAMPLES_HINT)
        self.shots.changed.connect(self._emit_changed)

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, BinaryJudge)  # narrows the type: the kind's descriptor chose this body
        self.criteria.setPlainText(d.criteria)
        self.shots.set_rows([[_user_text(s.messages), s.completion, s.reasoning, s.verdict] for s in d.examples])

    def _kind_values(self) -> JsonObject:
        return {
            "criteria": self.criteria.toPlainText(),
            "examples": [{"messages": _messages(r[0]), "completion": r[1], "reasoning": r[2], "verdict": r[3]}
                         for r in self.shots.rows()],
        }

    def _set_kind_read_only(self, read_only: bool) -> None:
        self.criteria.setReadOnly(read_only)
        self.shots.set_read_only(read_only)


BODY = BinaryJudgeBody
