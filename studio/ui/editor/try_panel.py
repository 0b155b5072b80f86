"""Try: grade one sample with the text as it is now, and show the score, the rationale and any error.

The scorer is the engine's own (``make_scorer``), so what Try shows is what a run would store; it runs
in ``ctx.tasks`` and its outcome comes back by signal.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from studio.core.models import GraderDefinition, Outcome, Sample

from ..context import AppContext

if TYPE_CHECKING:
    from studio.core.store.library import Library
from ..plain import plain_label
from ..qt import QtWidgets, Signal
from ..samples import SamplePicker
from .code_editor import monospace_font


def score_text(outcome: Outcome) -> str:
    """The big score: a judge's verdict beside its score ("PASS · 1"), an NA on its own (issue 35: a
    binary judge's Try showed a bare "1")."""
    verdict = (outcome.details or {}).get("verdict") if isinstance(outcome.details, dict) else None
    score = None if outcome.score is None else f"{outcome.score:.3g}"
    if isinstance(verdict, str) and verdict:
        return verdict if score is None else f"{verdict} · {score}"
    return "–" if score is None else score


def grade_one(ctx_library: Library, definition: GraderDefinition, sample: Sample) -> Outcome:
    """Off the GUI thread: build the scorer a run would use, grade one sample, close it."""
    from studio.core.graders.registry import make_scorer
    from studio.core.scoring import GradingContext

    async def go() -> Outcome:
        scorer = make_scorer(definition, GradingContext(library=ctx_library, concurrency=1))
        try:
            outcomes = await scorer.score_batch([sample])
        finally:
            await scorer.aclose()
        return outcomes[0]

    return asyncio.run(go())


class TryPanel(QtWidgets.QWidget):
    try_requested = Signal()

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.picker = SamplePicker(ctx)
        self.button = QtWidgets.QPushButton("Try on this sample")
        self.button.setToolTip("Grade the chosen sample with the definition as it is now (unsaved edits included)")
        self.score = QtWidgets.QLabel("–")
        self.score.setObjectName("bigScore")
        self.status = plain_label("Pick a sample and press Try.")  # a sample's error or rationale
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.detail = QtWidgets.QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setFont(monospace_font(9))
        self.detail.setPlaceholderText("The rationale, the error and the raw payload appear here.")
        result = QtWidgets.QHBoxLayout()
        result.addWidget(self.score)
        result.addWidget(self.status, 1)
        left = QtWidgets.QVBoxLayout()
        left.addWidget(self.picker)
        left.addWidget(self.button)
        left.addStretch(1)
        right = QtWidgets.QVBoxLayout()
        right.addLayout(result)
        right.addWidget(self.detail, 1)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(left, 2)
        layout.addLayout(right, 3)
        self.button.clicked.connect(lambda: self.try_requested.emit())
        self.outcome: Outcome | None = None

    def set_running(self) -> None:
        self.button.setEnabled(False)
        self.score.setText("…")
        self.status.setText("Grading…")

    def set_error(self, text: str) -> None:
        self.button.setEnabled(True)
        self.outcome = None
        self.score.setText("–")
        self.status.setText(text)
        self.detail.setPlainText("")

    def show_outcome(self, outcome: Outcome) -> None:
        self.button.setEnabled(True)
        self.outcome = outcome
        self.score.setText(score_text(outcome))
        parts: list[str] = [outcome.status]
        if outcome.duration_ms:
            parts.append(f"{outcome.duration_ms:.0f} ms")
        if outcome.prompt_tokens or outcome.completion_tokens:
            parts.append(f"{outcome.prompt_tokens}+{outcome.completion_tokens} tokens")
        if outcome.cached:
            parts.append("cached")
        if outcome.error:
            parts.append(outcome.error)
        self.status.setText(" · ".join(parts))
        self.score.setProperty("status", outcome.status)
        self.score.style().unpolish(self.score)
        self.score.style().polish(self.score)
        lines: list[str] = []
        if outcome.scores:
            lines.append("Scores: " + ", ".join(f"{k} = {v:.3g}" for k, v in outcome.scores.items()))
        if outcome.rationale:
            lines += ["Rationale:", outcome.rationale, ""]
        if outcome.error:
            lines += ["Error:", outcome.error, ""]
        if outcome.details:
            lines += ["Details:", json.dumps(outcome.details, indent=2, ensure_ascii=False, default=str), ""]
        if outcome.raw is not None:
            lines += ["Raw:", json.dumps(outcome.raw, indent=2, ensure_ascii=False, default=str)]
        self.detail.setPlainText("\n".join(lines).strip())
