"""Review ▸ New review queue…: ``grader-studio queues create`` in the window.

A lead picks a dataset, then one or more of its runs, and the rule that chooses the samples; only
the fields that rule needs are shown. The dialog builds the same ``QueueRule`` and calls the same
``create_queue`` the CLI calls (the rules live once, in engine/queues.py), on the task manager's
pool; a refusal (runs of two datasets, a rule that chose nothing, a name taken) comes back as the
engine's sentence, shown in the dialog as plain text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context import AppContext
from ..messages import describe_error
from ..plain import plain_label
from ..qt import Qt, QtWidgets, Signal

if TYPE_CHECKING:
    from studio.core.engine.queues import QueueRule
    from studio.core.models import RunInfo
    from studio.core.store.queues import Queue

#: the rules as a lead reads them: (label, the engine's rule, the fields it needs)
RULE_CHOICES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Random sample of N (with a seed)", "random", ("n", "seed")),
    ("Disagreements between two runs", "disagreements", ()),
    ("Disagreements between two graders of one suite run", "disagreements", ("graders",)),
    ("Low-confidence judge verdicts", "low_confidence", ("margin",)),
    ("Everything the judge failed", "failed", ()),
)


class NewQueueDialog(QtWidgets.QDialog):
    """Name, dataset, runs, rule (and its own fields), reviewers, labels wanted, leads; Create."""

    #: the new queue's name, once it is in the library
    created = Signal(str)

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None,
                 runs: list[int] | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle("New review queue")
        self.all_runs: list[RunInfo] = []
        self._preselect = set(runs or [])
        self.name = QtWidgets.QLineEdit()
        self.name.setPlaceholderText("e.g. capital-failures")
        self.dataset = QtWidgets.QComboBox()
        self.dataset.setToolTip("A queue's runs are all of one dataset")
        self.runs = QtWidgets.QListWidget()
        self.runs.setToolTip("Tick the runs the samples come from (two for disagreements between runs)")
        self.runs.setMinimumHeight(self.fontMetrics().height() * 6)
        self.rule = QtWidgets.QComboBox()
        for label, _rule, _fields in RULE_CHOICES:
            self.rule.addItem(label)
        self.n = QtWidgets.QSpinBox()
        self.n.setRange(1, 1_000_000)
        self.n.setValue(50)
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, 2_000_000_000)
        self.margin = QtWidgets.QDoubleSpinBox()
        self.margin.setRange(0.0, 1.0)
        self.margin.setSingleStep(0.05)
        self.margin.setDecimals(3)
        from studio.core.engine.queues import DEFAULT_MARGIN

        self.margin.setValue(DEFAULT_MARGIN)
        self.margin.setToolTip("A score this close to the pass threshold (either side) is low confidence")
        self.grader_a = QtWidgets.QComboBox()
        self.grader_b = QtWidgets.QComboBox()
        graders = QtWidgets.QHBoxLayout()
        graders.setContentsMargins(0, 0, 0, 0)
        graders.addWidget(self.grader_a, 1)
        graders.addWidget(plain_label("and"))
        graders.addWidget(self.grader_b, 1)
        self.graders = QtWidgets.QWidget()
        self.graders.setLayout(graders)
        self.everyone = QtWidgets.QRadioButton("Everyone")
        self.everyone.setChecked(True)
        self.named = QtWidgets.QRadioButton("Named users:")
        self.reviewers = QtWidgets.QLineEdit()
        self.reviewers.setPlaceholderText("ann, bob")
        self.reviewers.setEnabled(False)
        who = QtWidgets.QHBoxLayout()
        who.setContentsMargins(0, 0, 0, 0)
        who.addWidget(self.everyone)
        who.addWidget(self.named)
        who.addWidget(self.reviewers, 1)
        self.who = QtWidgets.QWidget()
        self.who.setLayout(who)
        self.labels_wanted = QtWidgets.QSpinBox()
        self.labels_wanted.setRange(1, 100)
        self.labels_wanted.setToolTip("How many reviewers label each sample")
        self.leads = QtWidgets.QLineEdit()
        self.leads.setPlaceholderText("empty: you")
        self.leads.setToolTip("Who settles samples and reads agreement (comma-separated user names)")
        self.form = QtWidgets.QFormLayout()
        self.form.addRow("Name", self.name)
        self.form.addRow("Dataset", self.dataset)
        self.form.addRow("Runs", self.runs)
        self.form.addRow("Rule", self.rule)
        self.form.addRow("Samples (N)", self.n)
        self.form.addRow("Seed", self.seed)
        self.form.addRow("Margin", self.margin)
        self.form.addRow("Graders", self.graders)
        self.form.addRow("Reviewers", self.who)
        self.form.addRow("Labels per sample", self.labels_wanted)
        self.form.addRow("Leads", self.leads)
        self.fields: dict[str, QtWidgets.QWidget] = {"n": self.n, "seed": self.seed, "margin": self.margin,
                                                     "graders": self.graders}
        self.status = plain_label("Loading the library's runs…")
        self.status.setWordWrap(True)
        self.buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.create_button = self.buttons.addButton("Create", QtWidgets.QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setDefault(True)
        self.create_button.setEnabled(False)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

        self.buttons.rejected.connect(self.reject)
        self.create_button.clicked.connect(self.make_queue)
        self.rule.currentIndexChanged.connect(lambda _i: self._show_fields())
        self.dataset.currentIndexChanged.connect(lambda _i: self._fill_runs())
        self.runs.itemChanged.connect(lambda _item: self._fill_graders())
        self.named.toggled.connect(self.reviewers.setEnabled)
        self._show_fields()
        library = ctx.library
        ctx.tasks.run(lambda: library.runs.list(limit=1000), self._loaded, self._failed)

    # --- loading -----------------------------------------------------------------------------------
    def _loaded(self, runs: list[RunInfo]) -> None:
        self.all_runs = runs
        datasets = sorted({r.dataset for r in runs})
        chosen = next((r.dataset for r in runs if r.id in self._preselect), None)
        self.dataset.blockSignals(True)
        self.dataset.addItems(datasets)
        if chosen is not None:
            self.dataset.setCurrentText(chosen)
        self.dataset.blockSignals(False)
        self._fill_runs()
        self.create_button.setEnabled(bool(runs))
        self.status.setText("Pick the runs and the rule; the queue's samples are chosen when you create it."
                            if runs else "No run yet: grade a dataset first, then make a queue of its samples.")

    def _failed(self, exc: BaseException) -> None:
        self.status.setText(describe_error(exc))
        self.create_button.setEnabled(bool(self.all_runs))

    def _fill_runs(self) -> None:
        dataset = self.dataset.currentText()
        self.runs.blockSignals(True)
        self.runs.clear()
        for run in self.all_runs:
            if run.dataset != dataset:
                continue
            graders = f" ({', '.join(run.suite.get('graders') or [])})" if run.suite and run.suite.get("key") else ""
            item = QtWidgets.QListWidgetItem(f"run {run.id} · {run.label}{graders} · {run.status} · "
                                             f"{run.done}/{run.total}")
            item.setData(Qt.ItemDataRole.UserRole, run.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if run.id in self._preselect else Qt.CheckState.Unchecked)
            self.runs.addItem(item)
        self.runs.blockSignals(False)
        self._fill_graders()

    def _fill_graders(self) -> None:
        """The suite graders of the ticked runs (the two-graders rule reads one suite run)."""
        keys: list[str] = []
        ticked = set(self.chosen_runs())
        for run in self.all_runs:
            if run.id in ticked and run.suite:
                keys += [k for k in run.suite.get("graders", []) if k not in keys]
        for box, pick in ((self.grader_a, 0), (self.grader_b, 1)):
            keep = box.currentText()
            box.clear()
            box.addItems(keys)
            if keep in keys:
                box.setCurrentText(keep)
            elif len(keys) > pick:
                box.setCurrentIndex(pick)

    def _show_fields(self) -> None:
        needed = RULE_CHOICES[self.rule.currentIndex()][2]
        for key, widget in self.fields.items():
            widget.setVisible(key in needed)
            label = self.form.labelForField(widget)
            if label is not None:
                label.setVisible(key in needed)
        self.adjustSize()

    # --- creating ----------------------------------------------------------------------------------
    def chosen_runs(self) -> list[int]:
        """The ticked runs, oldest first: the queue's first run is the one later runs are compared with."""
        return sorted(int(self.runs.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.runs.count())
                      if self.runs.item(i).checkState() == Qt.CheckState.Checked)

    def rule_of(self) -> QueueRule:
        """The engine's ``QueueRule`` from the fields the chosen rule shows (the others are left out)."""
        from studio.core.engine.queues import QueueRule

        _label, rule, needed = RULE_CHOICES[self.rule.currentIndex()]
        fields: dict[str, object] = {"rule": rule}
        if "n" in needed:
            fields.update(n=self.n.value(), seed=self.seed.value())
        if "margin" in needed:
            fields["margin"] = self.margin.value()
        if "graders" in needed:
            fields["graders"] = [self.grader_a.currentText(), self.grader_b.currentText()]
        return QueueRule.model_validate(fields)

    def make_queue(self) -> None:
        from studio.core.engine.queues import create_queue, user_names

        name = self.name.text().strip()
        if not name:
            self.status.setText("Give the queue a name.")
            return
        runs = self.chosen_runs()
        if not runs:
            self.status.setText("Tick at least one run of the dataset.")
            return
        if "graders" in RULE_CHOICES[self.rule.currentIndex()][2] and (
                not self.grader_a.currentText() or self.grader_a.currentText() == self.grader_b.currentText()):
            self.status.setText("Disagreements between graders need one suite run and two different graders of it.")
            return
        reviewers = user_names(self.reviewers.text()) if self.named.isChecked() else []
        if self.named.isChecked() and not reviewers:
            self.status.setText("Name the reviewers (comma-separated), or choose Everyone.")
            return

        try:
            rule = self.rule_of()
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            self.status.setText(describe_error(exc))
            return
        library, wanted, leads = self.ctx.library, self.labels_wanted.value(), user_names(self.leads.text())
        self.create_button.setEnabled(False)
        self.status.setText("Choosing the samples…")
        self.ctx.tasks.run(lambda: create_queue(library, name, runs, rule, labels_wanted=wanted,
                                                assignees=reviewers, leads=leads), self._created, self._failed)

    def _created(self, queue: Queue) -> None:
        self.status.setText(f"Queue {queue.name}: {queue.size} samples.")
        self.created.emit(queue.name)
        self.accept()
