"""The Review page: a reviewer labels a queue's samples blind, by keyboard; a lead reads agreement.

Blind as the CLI is: the page shows what ``QueueRepository.item`` returns, and the store returns
the judge's verdicts and the other reviewers' labels only once the reviewer's own label exists;
before that the page says what is hidden. P / F / N label the sample shown (with the note field's
text) and move on to the next sample still wanting the reviewer's label, U jumps there without
labelling. Every read and write runs on the task manager's pool, never on the GUI thread; an
answer for a sample no longer shown is dropped. Other reviewers' progress shows as they label
(the window's live view calls ``refresh_progress``).

A lead also gets the Agreement tab: reviewers among themselves, each judge against the humans,
the run's pass rate as judged and as adjudicated (each saying which), and the disagreements,
from which settled samples become few-shot examples of a new judge version or a curated dataset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from studio.core.json_types import JsonObject
from studio.core.store.authors import current_user

from ..context import AppContext
from ..messages import Messages, describe_error
from ..plain import plain_label
from ..qt import Qt, QtCore, QtGui, QtWidgets
from ..results.thread_view import ThreadView

if TYPE_CHECKING:
    from studio.core.models import Sample
    from studio.core.store.queues import Progress, Queue, ReviewItem

    from .new_queue import NewQueueDialog

T = TypeVar("T")

KEYS = {Qt.Key.Key_P: "PASS", Qt.Key.Key_F: "FAIL", Qt.Key.Key_N: "NA"}
HIDDEN = ("Hidden until you label this sample: the judge's verdict, score and rationale, and the other "
          "reviewers' labels. Press P (pass), F (fail) or N (not applicable); they then show side by side.")
NO_QUEUE = ("No review queue yet. A lead creates one from runs with New queue… above, or\n"
            "grader-studio queues create NAME --run N --rule failed --assign ann,bob\n"
            "(rules: random --n N --seed S, disagreements of two runs, low-confidence, failed).")


@dataclass
class Shown:
    """What the label tab shows of one sample (loaded off the GUI thread)."""

    sample_id: str
    position: int
    size: int
    reason: str
    question: str
    sample: Sample
    item: ReviewItem
    judges: list[JsonObject]


class QueueSamples(QtCore.QAbstractListModel):
    """The queue's samples: id, why it was chosen, and whether the reviewer labelled it."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, bool]] = []

    def reset(self, rows: list[tuple[str, str, bool]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex, role: int = 0) -> object:
        if not index.isValid():
            return None
        sample_id, reason, mine = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{'✓' if mine else '·'}  {sample_id}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{sample_id}: {reason or 'chosen by the queue'}" + (" (you labelled it)" if mine else "")
        return None

    def row_of(self, sample_id: str) -> int:
        return next((i for i, row in enumerate(self.rows) if row[0] == sample_id), -1)


class ReviewPage(QtWidgets.QWidget):
    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None,
                 messages: Messages | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.messages = messages or Messages(self)
        self.user = current_user()
        self.queue: Queue | None = None
        self.shown: Shown | None = None
        self.first_judge = ""  # the queue's first run's grader: the few-shots' suggested judge
        self._asked = 0  # the newest load asked: older answers are dropped
        self.queues = QtWidgets.QComboBox()
        self.queues.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.queues.setMinimumContentsLength(18)
        self.queues.setToolTip("The review queue: samples chosen from runs for a team to label")
        self.refresh_button = QtWidgets.QPushButton("Refresh")
        self.new_button = QtWidgets.QPushButton("New queue…")
        self.new_button.setToolTip("A queue of samples chosen from runs of one dataset by a rule, for reviewers "
                                   "to label (grader-studio queues create)")
        self.progress = plain_label("")
        self.progress.setWordWrap(True)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(plain_label("Queue"))
        top.addWidget(self.queues)
        top.addWidget(self.refresh_button)
        top.addWidget(self.new_button)
        top.addWidget(self.progress, 1)

        self.model = QueueSamples()
        self.list = QtWidgets.QListView()
        self.list.setModel(self.model)
        self.list.setUniformItemSizes(True)
        self.list.setMinimumWidth(120)
        self.list.setMaximumWidth(180)  # sample ids; the thread gets the width
        self.list.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)

        # --- label tab -----------------------------------------------------------------------------
        self.where = plain_label(NO_QUEUE)
        self.where.setWordWrap(True)
        self.question = plain_label("")
        self.question.setWordWrap(True)
        self.question.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.question.setMargin(6)
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.thread_view = ThreadView(empty="Pick a queue: its next sample for you shows here.")
        self.hidden = plain_label(HIDDEN)
        self.hidden.setWordWrap(True)
        self.hidden.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.hidden.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.hidden.setMargin(6)
        self.side = QtWidgets.QTableWidget(0, 3)
        self.side.setHorizontalHeaderLabels(["Who", "Verdict", "Note / rationale"])
        self.side.horizontalHeader().setStretchLastSection(True)
        self.side.verticalHeader().setVisible(False)
        self.side.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.side.setWordWrap(True)
        self.reveal = QtWidgets.QStackedWidget()
        self.reveal.addWidget(self.hidden)
        self.reveal.addWidget(self.side)
        self.reveal.setMaximumHeight(170)
        self.buttons: dict[str, QtWidgets.QPushButton] = {}
        bar = QtWidgets.QHBoxLayout()
        for key, verdict in (("P", "PASS"), ("F", "FAIL"), ("N", "NA")):
            button = QtWidgets.QPushButton(f"{verdict} ({key})")
            button.setToolTip(f"Label this sample {verdict} with the note, then go to your next sample")
            button.clicked.connect(lambda _=False, v=verdict: self.label(v))
            self.buttons[verdict] = button
            bar.addWidget(button)
        self.next_button = QtWidgets.QPushButton("Next for me (U)")
        self.next_button.setToolTip("The next sample that still wants your label")
        self.next_button.clicked.connect(self.next_sample)
        bar.addWidget(self.next_button)
        self.note = QtWidgets.QLineEdit()
        self.note.setPlaceholderText("Note (saved with your label)")
        self.note.setToolTip("Saved with your next P / F / N; Return saves it with the label you gave")
        self.note.returnPressed.connect(self._save_note)
        bar.addWidget(self.note, 1)
        self.settle_box = QtWidgets.QComboBox()
        self.settle_box.addItems(["PASS", "FAIL", "NA", "withdraw"])
        self.settle_button = QtWidgets.QPushButton("Settle")
        self.settle_button.setToolTip("As a lead: settle this sample (the note is the reason); the judge's "
                                      "verdict and every label are kept")
        self.settle_button.clicked.connect(self.settle)
        settle_row = QtWidgets.QHBoxLayout()
        settle_row.addWidget(plain_label("Lead:"))
        settle_row.addWidget(self.settle_box)
        settle_row.addWidget(self.settle_button)
        settle_row.addStretch(1)
        self.settle_widgets = QtWidgets.QWidget()
        self.settle_widgets.setLayout(settle_row)
        settle_row.setContentsMargins(0, 0, 0, 0)
        label_tab = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(label_tab)
        column.addWidget(self.where)
        column.addWidget(self.question)
        column.addWidget(self.thread_view, 1)
        column.addWidget(self.reveal)
        column.addLayout(bar)
        column.addWidget(self.settle_widgets)

        # --- agreement tab (a lead's) ----------------------------------------------------------------
        self.agreement_button = QtWidgets.QPushButton("Compute agreement")
        self.report_text = QtWidgets.QPlainTextEdit()
        self.report_text.setReadOnly(True)
        self.report_text.setPlaceholderText("A lead's view: every reviewer's labels at once, each judge against "
                                            "the humans, and the runs' pass rates as judged and as adjudicated.")
        self.disagreements = QtWidgets.QTableWidget(0, 5)
        self.disagreements.setHorizontalHeaderLabels(["Sample", "Why", "Labels", "Judges", "Settled"])
        self.disagreements.horizontalHeader().setStretchLastSection(True)
        self.disagreements.verticalHeader().setVisible(False)
        self.disagreements.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.disagreements.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.shots_button = QtWidgets.QPushButton("Few-shots for a judge…")
        self.shots_button.setToolTip("A new judge version with the selected settled samples as examples "
                                     "(the sample's thread, the lead's verdict, the note as reasoning)")
        self.dataset_button = QtWidgets.QPushButton("Curated dataset…")
        self.dataset_button.setToolTip("A new dataset of the selected settled samples, with provenance to the "
                                       "queue and its runs; the lead's verdicts are its labels")
        makers = QtWidgets.QHBoxLayout()
        makers.addWidget(self.agreement_button)
        makers.addStretch(1)
        makers.addWidget(self.shots_button)
        makers.addWidget(self.dataset_button)
        agreement_tab = QtWidgets.QWidget()
        lead_column = QtWidgets.QVBoxLayout(agreement_tab)
        lead_column.addLayout(makers)
        lead_column.addWidget(self.report_text, 3)
        lead_column.addWidget(self.disagreements, 2)

        self.tabs = QtWidgets.QTabWidget()
        self.tabs.addTab(label_tab, "Label")
        self.tabs.addTab(agreement_tab, "Agreement (lead)")
        self.tabs.setTabToolTip(1, "A lead's view: every reviewer's labels at once (leads: queues assign NAME USER --lead)")
        split = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.list)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([170, 10_000])  # the list its ids' width; no gap beside it
        split.setChildrenCollapsible(False)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)

        self.queues.currentIndexChanged.connect(lambda _i: self.open_queue())
        self.refresh_button.clicked.connect(lambda: self.reload())
        self.new_button.clicked.connect(lambda: self.new_queue())
        self.list.selectionModel().currentChanged.connect(self._picked)
        self.agreement_button.clicked.connect(self.compute_agreement)
        self.shots_button.clicked.connect(self.make_shots)
        self.dataset_button.clicked.connect(self.make_dataset)
        for widget in (self.list, self.thread_view, self.side, self):
            widget.installEventFilter(self)
        self._enable()
        self.reload()

    # --- keys --------------------------------------------------------------------------------------
    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802
        if event.type() == QtCore.QEvent.Type.KeyPress and isinstance(event, QtGui.QKeyEvent) \
                and event.modifiers() in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier):
            key = Qt.Key(event.key())
            if key in KEYS and self.shown is not None:
                self.label(KEYS[key])
                return True
            if key == Qt.Key.Key_U and self.queue is not None:
                self.next_sample()
                return True
        return super().eventFilter(watched, event)

    # --- loading -----------------------------------------------------------------------------------
    def _run(self, fn: Callable[[], T], done: Callable[[T], None]) -> None:
        self._asked += 1
        asked = self._asked

        def deliver(result: T) -> None:
            if asked == self._asked:
                done(result)

        self.ctx.tasks.run(fn, deliver, self._failed)

    def _failed(self, exc: BaseException) -> None:
        self.where.setText(describe_error(exc))
        self._enable()

    def new_queue(self, runs: list[int] | None = None) -> NewQueueDialog:
        """The New review queue dialog (``runs`` ticked); the created queue opens here."""
        from .new_queue import NewQueueDialog

        dialog = NewQueueDialog(self.ctx, self, runs=runs)
        dialog.created.connect(lambda name: self.reload(select=name))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def reload(self, select: str | None = None) -> None:
        """The queue list (keeping the one shown, or showing ``select``)."""
        keep = select or self.queues.currentText()
        library = self.ctx.library
        self.ctx.tasks.run(lambda: [q.name for q in library.queues.list()], lambda names: self._queues(names, keep),
                           self._failed)

    def _queues(self, names: list[str], keep: str) -> None:
        self.queues.blockSignals(True)
        self.queues.clear()
        self.queues.addItems(names)
        if keep in names:
            self.queues.setCurrentText(keep)
        self.queues.blockSignals(False)
        if not names:
            self.where.setText(NO_QUEUE)
            self.thread_view.clear_thread("No review queue yet.")
            self.queue = None
            self.model.reset([])
            self._enable()
            return
        self.open_queue()

    def open_queue(self, sample_id: str | None = None) -> None:
        name = self.queues.currentText()
        if not name:
            return
        library, user = self.ctx.library, self.user

        def load() -> tuple[Queue, list[tuple[str, str, bool]], list[Progress], str | None, str]:
            queue = library.queues.get(name)
            labels = library.queues.labels(name)
            rows = [(sid, reason, user in labels.get(sid, {})) for sid, reason in library.queues.samples(name)]
            judge = library.runs.get(queue.runs[0]).grader_key if queue.runs else ""
            return queue, rows, library.queues.progress(name), sample_id or library.queues.next_for(name, user), judge

        self._run(load, self._opened)

    def _opened(self, loaded: tuple[Queue, list[tuple[str, str, bool]], list[Progress], str | None, str]) -> None:
        self.queue, rows, progress, target, self.first_judge = loaded
        self.model.reset(rows)
        self._say_progress(progress)
        self.settle_widgets.setVisible(self.user in self.queue.leads)
        self.tabs.setTabEnabled(1, self.user in self.queue.leads)
        if target is None:
            self.shown = None
            self.thread_view.clear_thread("Nothing left for you in this queue: every sample has your label or the "
                                     "labels it wants. Pick one on the left to look again.")
            self.where.setText(f"{self.queue.name}: done for you ({self.user}).")
            self.question.clear()
            self.reveal.setCurrentWidget(self.hidden)
            self._enable()
            return
        self.show_sample(target)

    def _say_progress(self, progress: list[Progress]) -> None:
        if self.queue is None:
            return
        mine = next((p for p in progress if p.reviewer == self.user), None)
        others = [f"{p.reviewer} {p.labelled}/{p.total}" for p in progress if p.reviewer != self.user]
        self.progress.setText(f"You ({self.user}): {mine.labelled if mine else 0} of {self.queue.size} labelled"
                              + (" · " + " · ".join(others) if others else "")
                              + f" · {self.queue.labels_wanted} label(s) wanted per sample")

    def refresh_progress(self) -> None:
        """Others labelled (the live view): their progress and the list's marks, without moving."""
        if self.queue is None:
            self.reload()
            return
        library, name, user = self.ctx.library, self.queue.name, self.user

        def load() -> tuple[list[tuple[str, str, bool]], list[Progress]]:
            labels = library.queues.labels(name)
            rows = [(sid, reason, user in labels.get(sid, {})) for sid, reason in library.queues.samples(name)]
            return rows, library.queues.progress(name)

        def done(loaded: tuple[list[tuple[str, str, bool]], list[Progress]]) -> None:
            rows, progress = loaded
            if self.queue is not None and self.queue.name == name:
                current = self.shown.sample_id if self.shown else None
                self.model.reset(rows)
                self._select(current)
                self._say_progress(progress)

        self.ctx.tasks.run(load, done, self._failed)

    def _picked(self, current: QtCore.QModelIndex, _previous: QtCore.QModelIndex) -> None:
        if current.isValid() and (self.shown is None or self.model.rows[current.row()][0] != self.shown.sample_id):
            self.show_sample(self.model.rows[current.row()][0])

    def _select(self, sample_id: str | None) -> None:
        row = -1 if sample_id is None else self.model.row_of(sample_id)
        if row >= 0:
            self.list.selectionModel().blockSignals(True)
            self.list.setCurrentIndex(self.model.index(row))
            self.list.selectionModel().blockSignals(False)

    def show_sample(self, sample_id: str) -> None:
        if self.queue is None:
            return
        from studio.core.engine.queues import judge_words, question_of

        library, queue, user = self.ctx.library, self.queue, self.user
        reasons = {sid: reason for sid, reason, _ in self.model.rows}

        def load() -> Shown:
            item = library.queues.item(queue.name, sample_id, user)
            sample = library.datasets.sample(queue.dataset, item.idx)
            return Shown(sample_id, item.position, queue.size, reasons.get(sample_id, ""), question_of(library, queue),
                         sample, item, judge_words(library, item))

        self.buttons_enabled(False)
        self._run(load, self._show)

    def _show(self, shown: Shown) -> None:
        self.shown = shown
        self._select(shown.sample_id)
        item = shown.item
        state = (f"your label: {item.mine.verdict}" + (f" ({item.mine.note})" if item.mine.note else "")
                 + " · U for your next sample" if item.mine else "not labelled by you yet")
        self.where.setText(f"Sample {shown.sample_id} · {shown.position + 1} of {shown.size} · {state}"
                           + (f" · chosen because: {shown.reason}" if shown.reason else ""))
        self.question.setText(f"The grader's question: {shown.question}" if shown.question else
                              "The grader's question: (none recorded)")
        # the thread, the answer and the reference; not the row's metadata, which may carry an earlier
        # verdict (the demo's "human_verdict") and would unblind the reviewer
        self.thread_view.set_sample(shown.sample.model_copy(update={"metadata": {}}))
        self.note.setText(item.mine.note if item.mine else "")
        if item.revealed:
            self._fill_side(shown)
            self.reveal.setCurrentWidget(self.side)
        else:
            self.reveal.setCurrentWidget(self.hidden)
        self._enable()

    def _fill_side(self, shown: Shown) -> None:
        item = shown.item
        rows: list[tuple[str, str, str]] = []
        if item.mine is not None:
            rows.append((f"you ({item.reviewer})", item.mine.verdict or "", item.mine.note))
        elif self.queue is not None and self.user in self.queue.leads:
            rows.append(("you (lead)", "not labelled", "a lead sees everything, to settle"))
        rows += [(other.reviewer, other.verdict or "", other.note) for other in item.others or []]
        rows += [(f"judge: run {j['run_id']} ({j['grader']} v{j['grader_version']})", j["verdict"]
                  + ("" if j["score"] is None else f" · {j['score']:.2f}"), j["rationale"]) for j in shown.judges]
        if item.settled is not None:
            rows.append((f"settled by {item.settled.reviewer}", item.settled.verdict or "", item.settled.note))
        self.side.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, value in enumerate(cells):
                cell = QtWidgets.QTableWidgetItem(" ".join(value.split()))
                cell.setToolTip(value)
                self.side.setItem(r, c, cell)
        self.side.resizeColumnsToContents()
        self.side.horizontalHeader().setStretchLastSection(True)

    # --- writing -----------------------------------------------------------------------------------
    def label(self, verdict: str) -> None:
        shown = self.shown
        if shown is None or self.queue is None:
            return
        library, name, note = self.ctx.library, self.queue.name, self.note.text().strip()
        self.buttons_enabled(False)

        def write() -> str | None:
            library.queues.put_label(name, shown.sample_id, verdict, note)
            return library.queues.next_for(name)

        self._run(write, lambda following: self._labelled(shown.sample_id, following))

    def _save_note(self) -> None:
        shown = self.shown
        if shown is not None and shown.item.mine is not None and shown.item.mine.verdict:
            self.label(shown.item.mine.verdict)

    def _labelled(self, sample_id: str, following: str | None) -> None:
        """The label is in: show the sample revealed (judge and others side by side) and mark it; the
        next key press or U moves on, so the reveal is seen, never skipped past."""
        self.refresh_progress()
        self.show_sample(sample_id)
        self.next_button.setText("Next for me (U)" if following else "Done: nothing left (U)")

    def next_sample(self) -> None:
        if self.queue is not None:
            self.open_queue()

    def settle(self) -> None:
        shown = self.shown
        if shown is None or self.queue is None:
            return
        choice = self.settle_box.currentText()
        verdict = None if choice == "withdraw" else choice
        library, name, note = self.ctx.library, self.queue.name, self.note.text().strip()
        self._run(lambda: library.queues.settle(name, shown.sample_id, verdict, note),
                  lambda _settled: self.show_sample(shown.sample_id))

    # --- a lead's agreement --------------------------------------------------------------------------
    def compute_agreement(self) -> None:
        if self.queue is None:
            return
        from studio.core.engine.queues import (
            adjudicated,
            adjudicated_lines,
            agreement_lines,
            queue_agreement,
        )

        library, queue = self.ctx.library, self.queue

        def compute() -> tuple[JsonObject, list[str]]:
            library.queues.require_lead(queue.name)
            report = queue_agreement(library, queue.name)
            lines = agreement_lines(report) + ["", "The runs' pass rates (each line says which it is):"]
            for run in queue.runs:
                lines += [f"  run {run}: {line}" for line in adjudicated_lines(adjudicated(library, run))]
            return report, lines

        self.report_text.setPlainText("Computing…")
        self.agreement_button.setEnabled(False)
        self.ctx.tasks.run(compute, self._reported, self._report_failed)

    def _report_failed(self, exc: BaseException) -> None:
        self.agreement_button.setEnabled(True)
        self.report_text.setPlainText(describe_error(exc))

    def _reported(self, loaded: tuple[JsonObject, list[str]]) -> None:
        report, lines = loaded
        self.agreement_button.setEnabled(True)
        self.report_text.setPlainText("\n".join(lines))
        rows = report["disagreements"]
        self.disagreements.setRowCount(len(rows))
        for r, d in enumerate(rows):
            cells = [d["sample_id"], d["why"], " ".join(f"{w}:{v}" for w, v in d["labels"].items()),
                     " ".join(f"run {run}:{v}" for run, v in d["judges"].items()), d["settled"] or ""]
            for c, value in enumerate(cells):
                self.disagreements.setItem(r, c, QtWidgets.QTableWidgetItem(str(value)))
        self.disagreements.resizeColumnsToContents()
        self.disagreements.horizontalHeader().setStretchLastSection(True)

    def _chosen(self) -> list[str] | None:
        rows = sorted({index.row() for index in self.disagreements.selectionModel().selectedRows()})
        ids = [item.text() for r in rows if (item := self.disagreements.item(r, 0)) is not None]
        return ids or None  # none selected: every settled sample the rule takes

    def make_shots(self) -> None:
        if self.queue is None:
            return
        judge = self.messages.ask_text("Few-shots for a judge", "Judge (key) to save a new version of:",
                                       self.first_judge)
        if not judge:
            return
        from studio.core.engine.queues import shots_from_queue

        library, name, chosen = self.ctx.library, self.queue.name, self._chosen()
        self.ctx.tasks.run(lambda: shots_from_queue(library, name, judge.strip(), chosen),
                           lambda entry: self.messages.info(
                               "Few-shots saved", f"Saved {entry['grader']} v{entry['version']} with "
                               f"{len(entry['samples'])} examples from queue {name}. Re-run it on the queue "
                               f"(grader-studio queues rerun {name} --judge {entry['grader']}) to see its agreement "
                               "beside the old version's."),
                           lambda exc: self.messages.error("Few-shots not saved", exc))

    def make_dataset(self) -> None:
        if self.queue is None:
            return
        new = self.messages.ask_text("Curated dataset", "Name of the new dataset:", f"{self.queue.dataset}-reviewed")
        if not new:
            return
        from studio.core.engine.queues import dataset_from_queue

        library, name, chosen = self.ctx.library, self.queue.name, self._chosen()
        def made_it(made: JsonObject) -> None:
            self.ctx.datasets_changed.emit()
            self.messages.info("Dataset created", f"Dataset {made['dataset']}: {len(made['samples'])} settled samples "
                               f"from queue {name}, runs {', '.join(map(str, made['provenance']['runs']))}.")

        self.ctx.tasks.run(lambda: dataset_from_queue(library, name, new.strip(), chosen), made_it,
                           lambda exc: self.messages.error("Dataset not created", exc))

    # --- state -------------------------------------------------------------------------------------
    def buttons_enabled(self, on: bool) -> None:
        for button in self.buttons.values():
            button.setEnabled(on)
        self.settle_button.setEnabled(on)

    def _enable(self) -> None:
        self.buttons_enabled(self.shown is not None)
        self.next_button.setEnabled(self.queue is not None)
