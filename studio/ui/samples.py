"""Choosing one sample to look at: a dataset and a row, or a sample written by hand.

Shared by the Try panel and the judge designer's live preview. One row is a single indexed SQLite
read, so it is fetched inline; the hand-written sample needs no library at all.
"""

from __future__ import annotations

from studio.core.kinds import UnknownKind, get_kind
from studio.core.models import Sample, Turn

from .context import AppContext
from .eliding import ElidedCombo
from .plain import plain_label
from .qt import QtWidgets, Signal

HANDWRITTEN = "__handwritten__"


class SamplePicker(QtWidgets.QWidget):
    sample_changed = Signal()

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None, compact: bool = False) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dataset = ElidedCombo(14)  # a long dataset name elides in the middle, whole in its tooltip
        self.index = QtWidgets.QSpinBox(prefix="row ", minimum=0)
        self.summary = plain_label()  # a sample's id and text: never read as HTML
        self.summary.setObjectName("hint")
        self.summary.setWordWrap(True)
        self.question = QtWidgets.QPlainTextEdit()
        self.question.setPlaceholderText("User message")
        self.completion = QtWidgets.QPlainTextEdit()
        self.completion.setPlaceholderText("Completion under test")
        self.expected = QtWidgets.QLineEdit(placeholderText="Expected answer (optional)")
        self.manual = QtWidgets.QWidget()
        manual = QtWidgets.QFormLayout(self.manual)
        manual.setContentsMargins(0, 0, 0, 0)
        for edit in (self.question, self.completion):
            edit.setFixedHeight(54)
        manual.addRow("User", self.question)
        manual.addRow("Completion", self.completion)
        manual.addRow("Expected", self.expected)
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QtWidgets.QLabel("Sample"))
        row.addWidget(self.dataset, 1)
        row.addWidget(self.index)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addWidget(self.manual)
        self._sample: Sample | None = None
        self.dataset.currentIndexChanged.connect(self._dataset_changed)
        self.index.valueChanged.connect(self._load)
        for signal in (self.question.textChanged, self.completion.textChanged, self.expected.textChanged):
            signal.connect(self._load)
        ctx.datasets_changed.connect(self.reload)
        self.reload()

    def reload(self) -> None:
        current = self.dataset.currentData()
        if current == HANDWRITTEN and self.dataset.count() == 1:
            current = None  # "by hand" was all there was: the first dataset, now there is one
        blocked = self.dataset.blockSignals(True)
        self.dataset.clear()
        for record in self.ctx.library.datasets.list():
            self.dataset.addItem(f"{record.name} ({record.sample_count})", record.name)
        self.dataset.addItem("Write a sample by hand…", HANDWRITTEN)
        found = self.dataset.findData(current)
        self.dataset.setCurrentIndex(found if found >= 0 else 0)
        self.dataset.blockSignals(blocked)
        self._dataset_changed()

    def select(self, dataset: str, row: int = 0) -> None:
        found = self.dataset.findData(dataset)
        if found >= 0:
            self.dataset.setCurrentIndex(found)
            self.index.setValue(row)

    def prefer(self, tags: list[str], kind: str = "") -> None:
        """Show a dataset the grader can read (``preferred_dataset``)."""
        if self.dataset.currentData() == HANDWRITTEN:
            return
        names = [str(self.dataset.itemData(i)) for i in range(self.dataset.count())]
        choice = preferred_dataset(tags, kind, [n for n in names if n != HANDWRITTEN])
        if choice is not None and names.index(choice) != self.dataset.currentIndex():
            self.dataset.setCurrentIndex(names.index(choice))

    def _dataset_changed(self, *_: object) -> None:
        name = self.dataset.currentData()
        handwritten = name == HANDWRITTEN
        self.manual.setVisible(handwritten)
        self.index.setVisible(not handwritten)
        if not handwritten and name:
            try:
                count = self.ctx.library.datasets.get(name).sample_count
            except Exception:
                count = 0
            self.index.setMaximum(max(0, count - 1))
        self._load()

    def _load(self, *_: object) -> None:
        name = self.dataset.currentData()
        if name == HANDWRITTEN:
            self._sample = Sample(
                id="handwritten",
                messages=[Turn(role="user", content=self.question.toPlainText())],
                completion=self.completion.toPlainText(),
                expected=self.expected.text() or None,
            )
            self.summary.setText("")
            self.summary.setToolTip("")
        elif name:
            try:
                self._sample = self.ctx.library.datasets.sample(name, self.index.value())
            except Exception as exc:
                self._sample = None
                self.summary.setText(str(exc))
            else:
                question = self._sample.input_text().replace("\n", " ")
                answer = (self._sample.completion or "").replace("\n", " ")
                self.summary.setText(f"{self._sample.id}: {_cut(question, 90)} → {_cut(answer, 70)}")
                self.summary.setToolTip(f"{question}\n→ {answer}")
        else:
            self._sample = None
        self.sample_changed.emit()

    def sample(self) -> Sample | None:
        return self._sample


def preferred_dataset(tags: list[str], kind: str, names: list[str]) -> str | None:
    """The dataset of ``names`` a grader of ``kind`` with ``tags`` most likely reads: a pairwise judge a
    dataset of pairs; else the one its tags name exactly ("qa"), then one they begin ("qa-…"),
    never a dataset of pairs for a grader of one answer. None when no name fits: the choice stays."""
    try:
        pairs = get_kind(kind).pairs
    except UnknownKind:  # a kind no installed module declares any more: read it as one answer's
        pairs = False
    pairwise = pairs or "pairwise" in tags
    if pairwise:
        return next((n for n in names if "pair" in n), None)
    singles = [n for n in names if "pair" not in n]
    for tag in tags:
        if tag in singles:
            return tag
    for tag in tags:
        found = next((n for n in singles if n.startswith((f"{tag}-", f"{tag}_"))), None)
        if found is not None:
            return found
    return None


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, ending in "…" when cut (never mid-word without saying so)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
