"""Labelling from the results grid by keyboard: the human label of the selected sample.

P / F / N give PASS / FAIL / NA, a digit gives that score, U jumps to the next unlabelled sample;
the note field is saved with the label (Return saves it alone). After a key the grid moves to the
next row, so a hundred samples are a hundred key presses, with the thread and the judge's
rationale in the detail pane beside these controls. Labels belong to the dataset's samples (the
label set ``human`` unless another is picked), so they carry over to every run on that dataset.

A label names what it labels (issue 43). The bar shows the run, the sample and the label set a key
press writes to (a ``LabelTarget``, read from the result the detail pane shows, never from a row
number), and it is emptied the moment that sample stops being the one shown: another run (a new one
started, another picked, none), the selection cleared or moved, the rows reloaded, sorted or
filtered without it. A key press writes only when the target is still what the grid and the detail
pane show, and the store's write carries the version the bar showed: a label by someone else, or
one changed since it was shown, is replaced only after a question (``LabelRepository.put_many``
refuses it otherwise, the same rule the CLI's ``labels import --replace`` meets). Correcting
one's own label asks nothing. The analyst is ``current_user()``, the name every other write records.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from studio.core.json_types import JsonObject
from studio.core.models.broken import BrokenRow
from studio.core.models.labels import DEFAULT_KEY, Label, LabelInput, label_value
from studio.core.store.authors import current_user
from studio.core.store.labels import ReplaceRefused, broken_version

from ..broken_rows import BrokenRowsList
from ..messages import Messages, describe_error
from ..qt import QtCore, QtGui, QtWidgets, Signal
from .columns import COLUMN_INDEX

if TYPE_CHECKING:
    from ..context import AppContext
    from .filters import FilterBar
    from .model import ResultsModel


class LabelHost(Protocol):
    """What the labeller needs of the results view that holds it (a protocol, so this module does
    not import the view that imports it)."""

    ctx: AppContext
    model: ResultsModel
    filters: FilterBar
    table: QtWidgets.QTableView
    run_id: int | None
    result_selected: QtCore.SignalInstance  # (int): the result id the detail pane shows
    shown_result: JsonObject | None

    def select_row(self, row: int) -> None: ...

KEYS = {"P": "PASS", "F": "FAIL", "N": "NA"}
NOTHING = "Select a result to label it"


@dataclass(frozen=True)
class LabelTarget:
    """The sample the bar shows and a key press labels, and its label as shown (the newest version,
    a cleared one included; None: never labelled)."""

    run_id: int
    result_id: int
    dataset: str
    sample_id: str
    key: str
    seen: Label | None
    #: the newest version when it does not validate (a teammate's verdict this studio does not
    #: know): shown as broken, and a new label follows it (that is its repair)
    broken: BrokenRow | None = None

    @property
    def where(self) -> tuple[int, int, str, str, str]:
        return self.run_id, self.result_id, self.dataset, self.sample_id, self.key

    @property
    def version(self) -> int:
        if self.broken is not None:
            return broken_version(self.broken)
        return self.seen.version if self.seen is not None else 0


def label_text(label: Label | None) -> str:
    """A label as the bar and its questions say it: "FAIL (v1, ben)"."""
    if label is None or label.cleared:
        return "unlabelled"
    return f"{label.value} (v{label.version}, {label.labeler or 'an unnamed labeller'})"


class Labeler(QtWidgets.QFrame):
    labelled = Signal(str, object)  # sample id, Label | None

    def __init__(self, view: LabelHost, messages: Messages | None = None) -> None:
        super().__init__(view)  # type: ignore[arg-type]  # the view is a QWidget
        self.view = view
        self.ctx = view.ctx
        self.messages = messages or Messages(self)
        self.dataset: str | None = None
        self.target: LabelTarget | None = None
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.key = QtWidgets.QComboBox()
        self.key.setEditable(True)
        self.key.addItem(DEFAULT_KEY)
        self.key.setToolTip("Label set: labels belong to the dataset's samples, under this key")
        self.current = QtWidgets.QLabel(NOTHING)
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
        # the label set's labels that do not validate (a teammate's verdict this studio does not
        # know, a score that is no number), each with its sentence: under the bar, only when any
        self.broken = BrokenRowsList("Broken labels (cannot be read; label the sample again to repair):")
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        layout = QtWidgets.QHBoxLayout()
        outer.addLayout(layout)
        outer.addWidget(self.broken)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.key)
        layout.addWidget(self.current, 2)
        for button in self.buttons.values():
            layout.addWidget(button)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.next_button)
        self._shortcuts()
        # what the bar labels follows what is shown: each of these may change it (``_follow``)
        view.result_selected.connect(self._follow)
        view.table.selectionModel().currentRowChanged.connect(self._follow)
        for signal in (view.model.modelReset, view.model.layoutChanged, view.model.rowsRemoved):
            signal.connect(self._follow)
        self.key.currentTextChanged.connect(self._on_key)
        self.setEnabled(False)

    def _shortcuts(self) -> None:
        context = QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut
        bindings: list[tuple[str, Callable[[], object]]] = [
            (k, functools.partial(self.set_verdict, v)) for k, v in KEYS.items()]
        bindings += [(str(d), functools.partial(self.set_score, float(d))) for d in range(10)]
        bindings.append(("U", self.next_unlabelled))
        view = self.view
        assert isinstance(view, QtWidgets.QWidget)  # the results view (a protocol here, not imported)
        for key, slot in bindings:
            shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), view)
            shortcut.setContext(context)
            shortcut.activated.connect(slot)

    # -- run and selection ------------------------------------------------------------------------
    def label_key(self) -> str:
        return self.key.currentText().strip() or DEFAULT_KEY

    def set_run(self, run_id: int | None) -> None:
        """The run's dataset and label set: the grid's Label column and label filters read them.
        Whatever the bar showed is gone: nothing is labelled until a sample of this run is shown."""
        self.dataset = None
        self._set_target(None)
        self.broken.show_rows([])
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
            self.show_broken()
        except Exception as exc:
            self.current.setText(describe_error(exc))
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

    def show_broken(self) -> None:
        """List the label set's broken labels (after the run, the key or a label changed)."""
        self.broken.show_rows(self.ctx.library.labels.broken(self.dataset, self.label_key())
                              if self.dataset is not None else [])

    def _on_key(self, _text: str) -> None:
        """Another label set: the grid's Label column reads it, the bar shows the sample's label there."""
        self.set_run(self.view.run_id)
        self._follow()

    def _where(self) -> tuple[int, int, str, str, str] | None:
        """Run, result, dataset, sample and label set of the sample shown now: the result the detail
        pane shows, when it is the grid's current row and belongs to the view's run; else None."""
        view = self.view
        shown, index = view.shown_result, view.table.currentIndex()
        if shown is None or view.run_id is None or self.dataset is None or not index.isValid():
            return None
        if shown.get("run_id") != view.run_id or view.model.result_id(index.row()) != shown.get("id"):
            return None
        return view.run_id, int(shown["id"]), self.dataset, str(shown["sample_id"]), self.label_key()

    def _follow(self, *_: object) -> None:
        """The sample shown may have changed: keep the target while it is the same, else take the one
        shown now (its label read again), or none."""
        if self.target is None or self.target.where != self._where():
            self._reread()

    def _reread(self, note: str = "") -> None:
        """Take the sample shown now and read its label again (after a write or a question)."""
        where = self._where()
        self._set_target(None if where is None else self._read(*where), note)

    def _read(self, run_id: int, result_id: int, dataset: str, sample_id: str, key: str) -> LabelTarget | None:
        try:
            history = self.ctx.library.labels.history_entries(dataset, sample_id, key)
        except Exception as exc:
            self.current.setText(describe_error(exc))
            return None
        newest = history[-1] if history else None
        if isinstance(newest, BrokenRow):
            return LabelTarget(run_id, result_id, dataset, sample_id, key, None, newest)
        return LabelTarget(run_id, result_id, dataset, sample_id, key, newest)

    def _set_target(self, target: LabelTarget | None, note: str = "") -> None:
        self.target = target
        self.setEnabled(target is not None)
        self._show(note)

    def _show(self, note: str = "") -> None:
        target = self.target
        if target is None:
            run = self.view.run_id
            text = NOTHING if run is None else f"Run #{run}: {NOTHING[0].lower()}{NOTHING[1:]}"
        else:
            shown = f"broken: {target.broken.sentence()}" if target.broken is not None else label_text(target.seen)
            text = f"Run #{target.run_id} · {target.sample_id} · {target.key}: {shown}"
            if target.seen is not None and not target.seen.cleared:
                self.note.setText(target.seen.note)
            else:
                self.note.setText("")
        self.current.setText(f"{text}  — {note}" if note else text)
        self.current.setToolTip(text)

    # -- labelling ---------------------------------------------------------------------------------
    def set_verdict(self, verdict: str) -> None:
        self._put(verdict=verdict)

    def set_score(self, score: float) -> None:
        self._put(score=score)

    def save_note(self) -> None:
        target = self.target
        if target is not None and target.seen is not None and not target.seen.cleared:
            self._put(verdict=target.seen.verdict, score=target.seen.score, advance=False)
        elif target is not None:
            self._show("give a label first (P, F, N or a digit)")

    def _put(self, verdict: str | None = None, score: float | None = None, advance: bool = True) -> None:
        target = self.target
        if target is None or self._where() != target.where:  # the sample shown is not the bar's
            self._reread("nothing labelled: select the sample to label")
            return
        item = LabelInput(sample_id=target.sample_id, verdict=verdict, score=score,
                          note=self.note.text().strip(), labeler=current_user())
        replace, expected = False, target.version
        while True:
            try:
                label = self.ctx.library.labels.put(target.dataset, item, target.key,
                                                    replace=replace, expected=expected)
                break
            except ReplaceRefused as refused:
                stored = refused.refused[0].current
                if not self._consent(target, item, stored, refused.refused[0].changed):
                    self._reread("not labelled: the label stays as it is")
                    return
                if self._where() != target.where:  # the sample shown changed while the question was up
                    self._reread("nothing labelled: select the sample to label")
                    return
                replace, expected = True, stored.version if stored is not None else 0
            except Exception as exc:
                self._show(describe_error(exc))
                return
        if self.view.filters.label_set_id is None:
            self.set_run(self.view.run_id)
        self.view.model.forget_rows()
        if self.broken.rows:  # a relabelling repairs a broken label
            self.show_broken()
        self.labelled.emit(target.sample_id, label)
        self._reread()
        if advance:
            self._move(lambda row: True)

    def _consent(self, target: LabelTarget, item: LabelInput, stored: Label | None, changed: bool) -> bool:
        """Ask before replacing another person's label, or one changed since the bar showed it."""
        new = label_value(item.verdict, item.score)
        place = f"Run #{target.run_id} · sample {target.sample_id} · label set {target.key}"
        if changed:
            title = "Label changed since shown"
            why = (f"This label changed since it was shown (you saw {label_text(target.seen)}): "
                   f"it is now {label_text(stored)}.")
        else:
            title = "Replace another person's label?"
            who = stored.labeler if stored is not None and stored.labeler else "an unnamed labeller"
            why = f"This sample is labelled {label_text(stored)} by {who}."
        text = (f"{place}\n\n{why}\n\nReplace it with your {new}"
                f"{' and note' if item.note else ''}? The replaced version stays in the sample's history.")
        return self.messages.confirm(title, text, "Replace")

    def next_unlabelled(self) -> None:
        column = COLUMN_INDEX["label"]
        self._move(lambda row: not self.view.model.data(self.view.model.index(row, column)))

    def _move(self, wanted: Callable[[int], bool]) -> None:
        model = self.view.model
        current = self.view.table.currentIndex()
        start = current.row() + 1 if current.isValid() else 0
        for row in range(start, model.rowCount()):
            if wanted(row):
                self.view.select_row(row)
                self.view.table.setFocus()
                return
        self.current.setText(self.current.text() + "  — no further sample to go to")
