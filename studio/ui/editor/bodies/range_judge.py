"""The range judge's designer: criteria, the score range, evaluation steps, subranges (with a live
coverage check) and scored few-shot examples."""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models.judges import JudgeBase, RangeJudge, subrange_gaps, subrange_problems

from ...judges.lists import StepsEditor, TableEditor
from ...qt import QtWidgets
from .judge import EXAMPLES_HINT, JudgeBody, _messages, _user_text


class RangeJudgeBody(JudgeBody):
    form_title = "Criteria"

    def _build_form(self) -> None:
        self._add_criteria_text()
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
                                     defaults=[1, 1, "What an answer at this score looks like"], noun="subrange")
        self.shots = TableEditor([("User", "text"), ("Completion", "text"), ("Reasoning", "text"), ("Score", "int")],
                                 defaults=["", "", "", 1], noun="example")
        self.form.addRow("Score range", rng)
        self.form.addRow("", self.normalize)
        self.form.addRow("Evaluation steps", self.steps)
        self._add_section("Subranges", self.subranges, "What an answer in each part of the score range looks "
                          "like: they make scores consistent from one answer to the next.")
        self._add_examples(self.shots, EXAMPLES_HINT)
        for signal in (self.low.valueChanged, self.high.valueChanged, self.normalize.toggled,
                       self.steps.changed, self.subranges.changed, self.shots.changed):
            signal.connect(self._emit_changed)
        for signal in (self.low.valueChanged, self.high.valueChanged, self.subranges.changed):
            signal.connect(self._update_coverage)

    def _update_coverage(self, *_: object) -> None:
        """The model's own rules, live: a subrange that runs backwards or leaves the range is an
        error (Save refuses it with the same sentence), a score no subrange covers a warning."""
        low, high = self.low.value(), self.high.value()
        pairs = [(row[0], row[1]) for row in self.subranges.rows()
                 if isinstance(row[0], int) and isinstance(row[1], int)]
        problems = subrange_problems((low, high), pairs) if low < high else []
        gaps = subrange_gaps((low, high), pairs)
        label = self.subranges.footer
        if not self.subranges.rows():
            label.setText("No subranges: optional, but they make scores consistent.")
            label.setObjectName("hint")
        elif problems:
            label.setText("Not valid: " + "; ".join(problems))
            label.setObjectName("error")
        elif gaps:
            label.setText(f"Not covered: {', '.join(map(str, gaps))}")
            label.setObjectName("warning")
        else:
            label.setText(f"Covers {low}–{high}.")
            label.setObjectName("ok")
        label.style().unpolish(label)
        label.style().polish(label)

    def _load_kind(self, d: JudgeBase) -> None:
        assert isinstance(d, RangeJudge)  # narrows the type: the kind's descriptor chose this body
        self.criteria.setPlainText(d.criteria)
        self.low.setValue(d.score_range[0])
        self.high.setValue(d.score_range[1])
        self.normalize.setChecked(d.normalize)
        self.steps.set_steps(d.evaluation_steps)
        self.subranges.set_rows([[s.min, s.max, s.expectation] for s in d.subrange_expectations])
        self.shots.set_rows([[_user_text(s.messages), s.completion, s.reasoning, s.score] for s in d.shots])
        self._update_coverage()

    def _kind_values(self) -> JsonObject:
        return dict(
            criteria=self.criteria.toPlainText(),
            score_range=[self.low.value(), self.high.value()],
            normalize=self.normalize.isChecked(),
            evaluation_steps=self.steps.steps(),
            subrange_expectations=[{"min": r[0], "max": r[1], "expectation": r[2]} for r in self.subranges.rows()],
            shots=[{"messages": _messages(r[0]), "completion": r[1], "reasoning": r[2], "score": r[3]}
                   for r in self.shots.rows()],
        )

    def _set_kind_read_only(self, read_only: bool) -> None:
        self.criteria.setReadOnly(read_only)
        for table in (self.steps, self.subranges, self.shots):
            table.set_read_only(read_only)
        for widget in (self.low, self.high, self.normalize):
            widget.setEnabled(not read_only)


BODY = RangeJudgeBody
