"""Labelling from the results grid by keyboard: the human label of the selected sample.

P / F / N give PASS / FAIL / NA, a digit gives that score, U jumps to the next unlabelled sample;
the note field is saved with the label (Return saves it alone). After a key the grid moves to the
next row, so a hundred samples are a hundred key presses, with the thread and the judge's
rationale in the detail pane beside these controls. Labels belong to the dataset's samples (the
label set ``human`` unless another is picked), so they carry over to every run on that dataset.
"""

from __future__ import annotations

import getpass
from typing import Any, Protocol

from studio.core.models.labels import DEFAULT_KEY, LabelInput

from ..messages import describe_error
from ..plain import esc
from ..qt import Qt, QtCore, QtGui, QtWidgets, Signal
from .columns import COLUMN_INDEX


class LabelHost(Protocol):
    """What the labeller needs of the results view that holds it (a protocol, so this module does
    not import the view that imports it)."""

    ctx: Any
    model: Any
    filters: Any
    table: Any
    run_id: int | None
    result_selected: Any

    def select_row(self, row: int) -> None: ...

KEYS = {"P": "PASS", "F": "FAIL", "N": "NA"}


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container): the label is still the human's
        return ""


class Labeler(QtWidgets.QFrame):
    labelled = Signal(str, object)  # sample id, Label | None

    def __init__(self, view: LabelHost) -> None:
        super().__init__(view)  # type: ignore[arg-type]  # the view is a QWidget
        self.view = view
        self.ctx = view.ctx
        self.dataset: str | None = None
        self.sample_id: str | None = None
        self.labeler = _user()
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.key = QtWidgets.QComboBox()
        self.key.setEditable(True)
        self.key.addItem(DEFAULT_KEY)
        self.key.setToolTip("Label set: labels belong to the dataset's samples, under this key")
        self.current = QtWidgets.QLabel("Select a result to label it")
        self.current.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.current.setWordWrap(True)  # a long sample id wraps; it is never cut
        self.buttons = {}
        for key, verdict in KEYS.items():
            button = QtWidgets.QPushButton(f"{verdict} ({key})")
            button.clicked.connect(lambda _=False, v=verdict: self.set_verdict(v))
            self.buttons[verdict] = button
        self.note = QtWidgets.QLineEdit()
        self.note.returnPressed.connect(self.save_note)
        self.next_button = QtWidgets.QPushButton("Next unlabelled (U)")
        self.next_button.clicked.connect(self.next_unlabelled)
        # one compact row (no caption widgets), so labelling neither widens the run page past a
        # laptop screen nor takes height from the detail pane
        self.current.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.key.setToolTip("Human label set: labels belong to the dataset's samples, under this key. "
                            "P / F / N label, digits give a score, U jumps to the next unlabelled sample")
        self.note.setPlaceholderText("Note")
        self.note.setToolTip("A note saved with the label; Return saves the note alone. "
                             "P / F / N label, a digit gives that score, U goes to the next unlabelled sample")
        self.note.setMinimumWidth(self.note.fontMetrics().horizontalAdvance("Note") + 48)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.key)
        layout.addWidget(self.current, 2)
        for button in self.buttons.values():
            layout.addWidget(button)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.next_button)
        self._shortcuts()
        view.result_selected.connect(self._on_result)
        self.key.currentTextChanged.connect(lambda _text: self.set_run(self.view.run_id))
        self.setEnabled(False)

    def _shortcuts(self) -> None:
        context = QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut
        bindings = [(k, lambda v=v: self.set_verdict(v)) for k, v in KEYS.items()]
        bindings += [(str(d), lambda d=d: self.set_score(float(d))) for d in range(10)]
        bindings.append(("U", self.next_unlabelled))
        for key, slot in bindings:
            shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), self.view)
            shortcut.setContext(context)
            shortcut.activated.connect(slot)

    # -- run and selection ------------------------------------------------------------------------
    def label_key(self) -> str:
        return self.key.currentText().strip() or DEFAULT_KEY

    def set_run(self, run_id: int | None) -> None:
        """The run's dataset and label set: the grid's Label column and label filters read them."""
        self.dataset = None
        self.view.filters.label_set_id = None
        self.view.filters.repeat_runs = ()
        if run_id is None:
            return
        try:
            run = self.ctx.library.runs.get(run_id)
            if run.settings.get("repeat_index") is not None:  # unstable samples: see the filter
                from studio.core.engine.consistency import repeat_group

                self.view.filters.repeat_runs = tuple(r.id for r in repeat_group(self.ctx.library, run_id))
            self.dataset = run.dataset
            keys = self.ctx.library.labels.keys(run.dataset)
            self.view.filters.pass_threshold = run.pass_threshold
            self.view.filters.label_set_id = self.ctx.library.labels.set_id(run.dataset, self.label_key())
        except Exception as exc:
            self.current.setText(esc(describe_error(exc)))
            return
        self.key.blockSignals(True)
        for key in keys:
            if self.key.findText(key) < 0:
                self.key.addItem(key)
        self.key.blockSignals(False)
        query = self.view.model.query
        if query is not None and (query.filter.label_set_id, query.filter.repeat_runs) != (
                self.view.filters.label_set_id, self.view.filters.repeat_runs):
            self.view.model.set_filter(self.view.filters.value())

    def _on_result(self, result_id: int) -> None:
        row = self.view.model.row_of(result_id)
        sample_id = self.view.model.data(self.view.model.index(row, COLUMN_INDEX["sample_id"])) \
            if row is not None else None
        self.sample_id = sample_id
        self.setEnabled(sample_id is not None and self.dataset is not None)
        self._show()

    def _show(self) -> None:
        if self.sample_id is None or self.dataset is None:
            self.current.setText("Select a result to label it")
            return
        history = self.ctx.library.labels.history(self.dataset, self.sample_id, self.label_key())
        if not history or history[-1].cleared:
            self.current.setText(f"<b>{esc(self.sample_id)}</b>: unlabelled")
            self.note.setText("")
            return
        label = history[-1]
        value = label.verdict or f"{label.score:g}"
        by = f", {label.labeler}" if label.labeler else ""
        self.current.setText(f"<b>{esc(self.sample_id)}</b>: <b>{esc(value)}</b> (v{label.version}{esc(by)})")
        self.note.setText(label.note)

    # -- labelling ---------------------------------------------------------------------------------
    def set_verdict(self, verdict: str) -> None:
        self._put(verdict=verdict)

    def set_score(self, score: float) -> None:
        self._put(score=score)

    def save_note(self) -> None:
        history = self.ctx.library.labels.history(self.dataset, self.sample_id, self.label_key()) \
            if self.sample_id and self.dataset else []
        if history and not history[-1].cleared:
            self._put(verdict=history[-1].verdict, score=history[-1].score, advance=False)
        else:
            self.current.setText(f"<b>{esc(self.sample_id)}</b>: give a label first (P, F, N or a digit)")

    def _put(self, verdict: str | None = None, score: float | None = None, advance: bool = True) -> None:
        if self.sample_id is None or self.dataset is None:
            return
        item = LabelInput(sample_id=self.sample_id, verdict=verdict, score=score,
                          note=self.note.text().strip(), labeler=self.labeler)
        try:
            label = self.ctx.library.labels.put(self.dataset, item, self.label_key())
        except Exception as exc:
            self.current.setText(esc(describe_error(exc)))
            return
        if self.view.filters.label_set_id is None:
            self.set_run(self.view.run_id)
        self.view.model.forget_rows()
        self.labelled.emit(self.sample_id, label)
        self._show()
        if advance:
            self._move(lambda row: True)

    def next_unlabelled(self) -> None:
        column = COLUMN_INDEX["label"]
        self._move(lambda row: not self.view.model.data(self.view.model.index(row, column)))

    def _move(self, wanted) -> None:  # type: ignore[no-untyped-def]
        model = self.view.model
        current = self.view.table.currentIndex()
        start = current.row() + 1 if current.isValid() else 0
        for row in range(start, model.rowCount()):
            if wanted(row):
                self.view.select_row(row)
                self.view.table.setFocus()
                return
        self.current.setText(self.current.text() + "  — no further sample to go to")
