"""``AgreementView``: how far a run's judge agrees with the human labels of its dataset.

The numbers are ``studio.core.engine.agreement``'s (the same as ``grader-studio agreement``),
computed off the GUI thread. Plots where people would rather look than read: the confusion
matrix as a heat map, judge score against human score, and κ over pass thresholds (with the best
threshold marked). A disagreement opens in the results' detail pane; "Align judge…" is the
guided step that runs ``align`` and reports the held-out κ before and after.
"""

from __future__ import annotations

import contextlib
import html
from typing import TYPE_CHECKING

import numpy as np

from studio.core.json_types import JsonObject
from studio.core.models.labels import DEFAULT_KEY

from ..context import AppContext
from ..eliding import ElidedCombo
from ..file_dialogs import open_file
from ..messages import Messages, describe_error
from ..plain import esc, short
from ..plots import pg
from ..qt import Qt, QtWidgets, Signal
from ..suites.grader_pick import GraderPick

if TYPE_CHECKING:
    from studio.core.models import RunInfo
    from studio.core.store.library import Library

HOW_TO_LABEL = ("To get human labels: open the run in Run & results, select a result and press P (pass), "
                "F (fail) or N (not applicable), or a digit for a score; each key moves to the next sample. "
                "Or import a labels file (JSONL or CSV: sample_id, then label PASS/FAIL/NA or score), here or with "
                "grader-studio labels import FILE --dataset NAME.")
NO_RUN = ("No runs yet. Run a grader on a dataset in Run & results, then label some of its samples: "
          "agreement compares the judge's verdicts with yours.\n\n" + HOW_TO_LABEL)


def fmt(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "<i>undefined</i>"
    # an interval to three decimals like its value (issue 35: "[0.48, 0.88]" beside "0.693")
    return f"{value:.3f}" + (f" <span style='color:#6b7280'>[{ci[0]:.3f}, {ci[1]:.3f}]</span>" if ci else "")


def _plain_axes(plot: pg.PlotWidget) -> None:
    """No SI prefix on a plot's unitless 0–1 axes: pyqtgraph 0.14 scales such an axis by 1000 whatever
    enableAutoSIPrefix(False) says, and setLabel forgets the ranges (κ read 0–600 on a suite run)."""
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setSIPrefixEnableRanges(((0.0, 0.0),))
        axis.updateAutoSIPrefix()


def summary_html(report: JsonObject) -> str:
    undefined = report["undefined"]
    excluded = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(report["excluded"].items())) or "none"
    lines = [f"<b>Run {report['run_id']}</b>: {html.escape(short(report['grader']))} v{report['grader_version']} on "
             f"{html.escape(short(report['dataset']))}, labels <b>{html.escape(short(report['labels']))}</b> · "
             f"n = {report['n']} · excluded: {excluded}"]
    if report["n_binary"]:
        kappa = report["cohen_kappa"]
        reading = report["kappa_reading"] if kappa is not None else html.escape(undefined.get("cohen_kappa", ""))
        lines.append(f"Cohen's κ <b>{fmt(kappa, report['kappa_ci'])}</b> ({reading}) · accuracy "
                     f"{fmt(report['accuracy'])} · human PASS rate {fmt(report['base_rate'])}")
        for warning in report["warnings"]:
            lines.append(f"<span style='color:#b45309'>⚠ {html.escape(warning)}</span>")
    if report["n_scores"]:
        parts = [f"{name} {fmt(report.get(name), report.get(name + '_ci'))}"
                 for name in ("spearman", "kendall", "pearson", "mae", "quadratic_kappa")]
        lines.append(" · ".join(parts))
        lines.append(f"<span style='color:#6b7280'>{html.escape(report['scale_mapping'] or '')}</span>")
    if report["n"] == 0:
        lines.append(f"<i>{html.escape(undefined.get('n', 'nothing to compare'))}</i>")
    return "<br>".join(lines)


class AgreementView(QtWidgets.QWidget):
    open_sample = Signal(int, str)   # run id, sample id
    reported = Signal(object)        # the agreement report dict
    aligned = Signal(object)         # the align report dict

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None,
                 messages: Messages | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.messages = messages or Messages(self)
        self.report: JsonObject | None = None
        self.run = ElidedCombo(20)  # "#12 · a long grader name on a dataset": elided in the middle
        self.key = QtWidgets.QComboBox()
        self.key.setEditable(True)
        self.key.addItem(DEFAULT_KEY)
        self.key.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.key.setMinimumContentsLength(10)  # a label set's name: "human", "second-opinion"
        self.reload_button = QtWidgets.QPushButton("Refresh")
        self.align_button = QtWidgets.QPushButton("Align judge…")
        self.align_button.setToolTip("Add few-shot examples from disagreements in a training part; "
                                     "measure old and new on a held-out part only")
        self.summary = QtWidgets.QLabel("Choose a run of a grader on a labelled dataset.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.confusion_plot = pg.PlotWidget(title="Confusion")
        self.scatter_plot = pg.PlotWidget(title="Judge vs human")
        self.sweep_plot = pg.PlotWidget(title="κ by threshold")
        for plot in (self.confusion_plot, self.scatter_plot, self.sweep_plot):
            plot.setMinimumHeight(220)
            plot.setMenuEnabled(False)
        self.table = QtWidgets.QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Sample", "Human", "Judge", "Score", "Judge's rationale / note"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)

        self.import_button = QtWidgets.QPushButton("Import labels…")
        self.import_button.setToolTip("Add human labels from a JSONL or CSV file (a sample_id and a label "
                                      "PASS/FAIL/NA or a score a line) to the chosen run's dataset")
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(QtWidgets.QLabel("Run"))
        bar.addWidget(self.run, 1)
        self.grader = GraderPick()  # suite runs: one grader, or the overall (ui/suites/grader_pick.py)
        bar.addWidget(self.grader)
        self.grader.activated.connect(lambda _i: self.compute())
        bar.addWidget(QtWidgets.QLabel("Labels"))
        bar.addWidget(self.key)
        bar.addWidget(self.reload_button)
        # the label-file and align buttons beside the summary they act on, one above the other: in the
        # bar, with a suite's grader picker shown, they pushed the window past 1280 px (issue 35)
        beside = QtWidgets.QHBoxLayout()
        beside.addWidget(self.summary, 1)
        buttons = QtWidgets.QVBoxLayout()
        buttons.setSpacing(4)
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.align_button)
        buttons.addStretch(1)
        beside.addLayout(buttons)
        plots = QtWidgets.QHBoxLayout()
        for plot in (self.confusion_plot, self.scatter_plot, self.sweep_plot):
            plots.addWidget(plot)
        results = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(results)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(plots, 2)
        column.addWidget(QtWidgets.QLabel("Disagreements, worst first (click one to read it in the results)"))
        column.addWidget(self.table, 2)
        # nothing to compare yet: say how to get labels instead of showing three empty plots
        self.empty = QtWidgets.QLabel(HOW_TO_LABEL)
        self.empty.setObjectName("emptyState")
        self.empty.setTextFormat(Qt.TextFormat.PlainText)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.label_button = QtWidgets.QPushButton("Label this run’s samples")
        self.label_button.setToolTip("Open the run in Run & results: select a result, press P, F or N")
        self.empty_import = QtWidgets.QPushButton("Import a labels file…")
        actions = QtWidgets.QHBoxLayout()
        actions.addWidget(self.label_button)
        actions.addWidget(self.empty_import)
        actions.addStretch(1)
        empty = QtWidgets.QWidget()
        empty_column = QtWidgets.QVBoxLayout(empty)
        empty_column.addWidget(self.empty)
        empty_column.addLayout(actions)
        empty_column.addStretch(1)
        self.stack = QtWidgets.QStackedWidget()
        self.stack.addWidget(empty)
        self.stack.addWidget(results)
        self.empty_page, self.results_page = empty, results
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(beside)
        layout.addWidget(self.stack, 1)
        self.label_button.clicked.connect(self._label_here)
        self.import_button.clicked.connect(self.ask_import)
        self.empty_import.clicked.connect(self.ask_import)
        self._set_state(None)

        self.run.currentIndexChanged.connect(lambda _i: self.compute())
        self.reload_button.clicked.connect(self.reload)
        self.key.activated.connect(lambda _i: self.compute())
        self.table.cellClicked.connect(self._open_row)
        self.align_button.clicked.connect(self.ask_align)

    def _set_state(self, report: JsonObject | None) -> None:
        """What there is to compute: no run, a run without labels, or agreement to show."""
        has_run = self.run.currentData() is not None
        has_labels = report is not None and report["n"] > 0
        self.stack.setCurrentWidget(self.results_page if has_labels else self.empty_page)
        for button in (self.reload_button, self.import_button, self.empty_import, self.label_button):
            button.setEnabled(has_run)
        self.align_button.setEnabled(has_labels and bool(report and report.get("n_binary")))
        if not has_run:
            self.empty.setText(NO_RUN)
        elif not has_labels:
            dataset = report["dataset"] if report is not None else "this run's dataset"
            key = self.key.currentText().strip() or DEFAULT_KEY
            self.empty.setText(f"The samples of {dataset} have no human labels under “{key}” yet, so there is "
                               f"nothing to compare the judge with.\n\n{HOW_TO_LABEL}")

    def _label_here(self) -> None:
        run_id = self.run.currentData()
        if run_id is not None:
            self.open_sample.emit(run_id, "")

    def ask_import(self) -> None:
        path = open_file(self, "Import labels", "", "Labels (*.jsonl *.csv);;All files (*)")
        if path:
            self.import_labels(path)

    def import_labels(self, path: str, *, replace: bool = False) -> None:
        """Add the labels in ``path`` to the chosen run's dataset (all or nothing), then recompute. A
        file that would replace other people's labels is imported only once that is asked and agreed
        (``replace``: agreed; the store refuses it otherwise, as the CLI does without --replace)."""
        run_id = self.run.currentData()
        if run_id is None:
            return
        key = self.key.currentText().strip() or DEFAULT_KEY
        library = self.ctx.library

        def work() -> int:
            from studio.core.datasets.label_files import read_labels

            dataset = library.runs.get(run_id).dataset
            items = read_labels(path, library.labels.sample_ids(dataset))
            return library.labels.put_many(dataset, items, key, replace=replace)

        def done(written: int) -> None:
            with contextlib.suppress(RuntimeError):
                self.summary.setText(f"Imported {written} label versions from {path}.")
                self.compute()

        def failed(exc: BaseException) -> None:
            from studio.core.store.labels import ReplaceRefused

            if not isinstance(exc, ReplaceRefused) or replace:
                self._failed(exc)
                return
            with contextlib.suppress(RuntimeError):
                if self.messages.confirm("Replace other people's labels?",
                                         f"{path}\n\n{exc}.\n\nImport the file and replace them?", "Replace"):
                    self.import_labels(path, replace=True)
                else:
                    self.summary.setText(esc(f"Nothing imported from {path}: {exc}."))  # a rich-text label

        self.summary.setText(f"Importing labels from {path}…")
        self.ctx.tasks.run(work, done, failed)

    # -- choices -----------------------------------------------------------------------------------
    def reload(self) -> None:
        """Re-list the runs (keeping the chosen one) and recompute."""
        chosen = self.run.currentData()
        self.run.blockSignals(True)
        self.run.clear()
        try:
            runs = self.ctx.library.runs.list(limit=500)
        except Exception as exc:
            self.summary.setText(describe_error(exc))
            runs = []
        for info in runs:
            self.run.addItem(f"#{info.id} · {info.label} on {info.dataset} · "
                             f"{info.status}", info.id)
        index = self.run.findData(chosen)
        self.run.setCurrentIndex(index if index >= 0 else (self._first_labelled(runs)))
        self.run.blockSignals(False)
        self.compute()

    def _first_labelled(self, runs: list[RunInfo]) -> int:
        """Open on the newest run whose dataset has labels (the demo's judge run on first open)."""
        for i, info in enumerate(runs):
            try:
                if self.ctx.library.labels.keys(info.dataset):
                    return i
            except Exception:
                continue
        return 0 if runs else -1

    def show_run(self, run_id: int) -> None:
        if self.run.findData(run_id) < 0:
            self.reload()
        self.run.setCurrentIndex(self.run.findData(run_id))

    # -- computing ---------------------------------------------------------------------------------
    def compute(self) -> None:
        run_id = self.run.currentData()
        if run_id is None:
            self.report = None
            self.summary.setText("No runs yet.")
            self._set_state(None)
            return
        key = self.key.currentText().strip() or DEFAULT_KEY
        library = self.ctx.library
        self.grader.refresh(library, [run_id])
        grader = self.grader.currentData()
        self.summary.setText(f"Computing agreement of run {run_id}…")
        self.ctx.tasks.run(lambda: _agreement(library, run_id, key, grader), self._show, self._failed)

    def _failed(self, exc: BaseException) -> None:
        with contextlib.suppress(RuntimeError):
            self.summary.setText(describe_error(exc))

    def _show(self, report: JsonObject) -> None:
        try:  # a report of another run or label set, overtaken by a later choice: not this one
            if report["run_id"] != self.run.currentData() or \
                    report["labels"] != (self.key.currentText().strip() or DEFAULT_KEY):
                return
        except RuntimeError:  # the view was closed while computing
            return
        self.report = report
        self._set_state(report)
        text = summary_html(report)
        if self.grader.isVisibleTo(self):  # a suite run: which of its scores the page measures
            shown = self.grader.currentData()
            text = (f"Showing <b>{html.escape(short(shown))}</b>, one grader of the suite" if shown
                    else "Showing the suite's <b>overall score</b>") + " (choose another beside Run)<br>" + text
        self.summary.setText(text)
        self._plot_confusion(report)
        self._plot_scatter(report)
        self._plot_sweep(report)
        self._fill_table(report["disagreements"])
        self.reported.emit(report)

    def _plot_confusion(self, report: JsonObject) -> None:
        plot = self.confusion_plot
        plot.clear()
        confusion = report.get("confusion")
        if not confusion:
            plot.setTitle("Confusion: no PASS/FAIL labels")
            return
        plot.setTitle("Confusion (human × judge)")
        classes = ["PASS", "FAIL"]
        matrix = np.array([[confusion[h][j] for j in classes] for h in classes], dtype=float)
        image = pg.ImageItem(matrix.T[:, ::-1])  # x = judge, y = human (PASS on top)
        image.setLookupTable(pg.colormap.get("viridis").getLookupTable())
        image.setLevels((0, max(1.0, matrix.max())))
        plot.addItem(image)
        for r, _human in enumerate(classes):
            for c, _judge in enumerate(classes):
                text = pg.TextItem(f"{int(matrix[r, c])}", anchor=(0.5, 0.5),
                                   color="w" if matrix[r, c] < matrix.max() * 0.6 else "k")
                text.setPos(c + 0.5, 1.5 - r)
                plot.addItem(text)
        plot.getAxis("bottom").setTicks([[(0.5, "judge PASS"), (1.5, "judge FAIL")]])
        plot.getAxis("left").setTicks([[(1.5, "human PASS"), (0.5, "human FAIL")]])
        plot.disableAutoRange()
        plot.setXRange(0, 2, padding=0)
        plot.setYRange(0, 2, padding=0)

    def _plot_scatter(self, report: JsonObject) -> None:
        plot = self.scatter_plot
        plot.clear()
        points = report.get("points") or []
        if points:
            plot.setTitle("Judge vs human score")
            plot.getAxis("bottom").setTicks(None)
            x = np.array([p["human"] for p in points], dtype=float)
            y = np.array([p["judge"] for p in points], dtype=float)
        else:  # binary labels: the judge's score of each FAIL- (0) and PASS-labelled (1) sample
            pairs = [(p["human"], p["judge"]) for p in report.get("binary_points") or []]
            plot.setTitle("Judge score by verdict")
            x = np.array([1.0 if h == "PASS" else 0.0 for h, _ in pairs])
            y = np.array([s if s is not None else np.nan for _, s in pairs], dtype=float)
            plot.getAxis("bottom").setTicks([[(0.0, "human FAIL"), (1.0, "human PASS")]])
        if len(x):
            rng = np.random.default_rng(0)
            jitter = rng.uniform(-0.15, 0.15, size=(2, len(x))) * (0.0 if points else 1.0)
            x, y = x + jitter[0], y + jitter[1] * 0.2
            plot.addItem(pg.ScatterPlotItem(x, y, size=8, brush=pg.mkBrush(37, 99, 235, 150), pen=None))
            low, high = float(np.nanmin([x.min(), np.nanmin(y)])), float(np.nanmax([x.max(), np.nanmax(y)]))
            if points:  # the line of perfect agreement
                plot.addItem(pg.PlotDataItem([low, high], [low, high], pen=pg.mkPen("#9ca3af", style=Qt.PenStyle.DashLine)))
        plot.setLabel("bottom", "human")
        plot.setLabel("left", "judge")
        _plain_axes(plot)

    def _plot_sweep(self, report: JsonObject) -> None:
        plot = self.sweep_plot
        plot.clear()
        sweep = [s for s in report.get("threshold_sweep") or [] if s["kappa"] is not None]
        if not sweep:
            plot.setTitle("κ by threshold: needs PASS/FAIL")
            return
        best = report["best_threshold"]
        # a title wider than the plot widens the whole scene and clips the plot: keep titles short
        plot.setTitle(f"κ by threshold (best {best:.3f})")
        plot.setToolTip(f"Cohen's κ at each pass threshold; best {best:.3f}, this run's "
                        f"{report['pass_threshold']:.3f} (dashed)")
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.plot([s["threshold"] for s in sweep], [s["kappa"] for s in sweep], pen=pg.mkPen("#2563eb", width=2),
                  symbol="o", symbolSize=6, symbolBrush="#2563eb")
        plot.addItem(pg.InfiniteLine(best, angle=90, pen=pg.mkPen("#16a34a", width=2),
                                     label="best", labelOpts={"position": 0.9}))
        plot.addItem(pg.InfiniteLine(report["pass_threshold"], angle=90,
                                     pen=pg.mkPen("#9ca3af", style=Qt.PenStyle.DashLine)))
        plot.setLabel("bottom", "pass threshold")
        plot.setLabel("left", "κ")
        _plain_axes(plot)

    def _fill_table(self, rows: list[JsonObject]) -> None:
        self.table.setRowCount(len(rows))
        for r, d in enumerate(rows):
            score = "" if d.get("judge_score") is None else f"{d['judge_score']:.3f}"
            rationale = (d.get("rationale") or "").replace("\n", " ")
            note = d.get("human_note") or ""
            cells = [d["sample_id"], str(d["human"]), str(d["judge"]), score,
                     rationale + (f"  — human: {note}" if note else "")]
            whole = (d.get("rationale") or "") + (f"\n\nhuman: {note}" if note else "")
            for c, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                item.setToolTip(whole if c == len(cells) - 1 else text)  # the whole text where a cell cuts it
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)

    def _open_row(self, row: int, _column: int) -> None:
        if self.report is None or not 0 <= row < len(self.report["disagreements"]):
            return
        self.open_sample.emit(self.report["run_id"], self.report["disagreements"][row]["sample_id"])

    # -- align (the guided step) ---------------------------------------------------------------------
    def ask_align(self) -> None:
        if self.report is None:
            return
        text = (f"Align “{self.report['grader']}” with the labels “{self.report['labels']}” of "
                f"{self.report['dataset']}?\n\n70% of the labelled samples are a training part: the judge's "
                "disagreements there become few-shot examples (the human label and note are the expected "
                "answer) in a new version. Old and new are then run on the other 30% only, and κ before "
                "and after is reported. The judge's endpoint is called for every sample.")
        answer = QtWidgets.QMessageBox.question(self, "Align judge", text)
        if answer == QtWidgets.QMessageBox.StandardButton.Yes:
            self.start_align()

    def start_align(self, holdout: float = 0.3, seed: int = 0) -> None:
        from studio.core.engine.align import AlignOptions, align

        report = self.report
        if report is None:
            return
        library = self.ctx.library
        options = AlignOptions(labels=report["labels"], holdout=holdout, seed=seed)
        self.align_button.setEnabled(False)
        self.summary.setText(self.summary.text() + "<br><i>Aligning: grading the training part…</i>")
        self.ctx.tasks.run(lambda: align(library, report["grader"], report["dataset"], options),
                           self._aligned, self._align_failed)

    def _aligned(self, result: JsonObject) -> None:
        try:
            self.align_button.setEnabled(True)
        except RuntimeError:
            return
        if result["new_version"] is None:
            message = html.escape(str(result.get("note", "no new version")))
        else:
            b, a = result["before"], result["after"]
            change = result.get("change", {}).get("sentence", "")
            message = (f"Saved v{result['new_version']} with {result['shots_added']} examples. On the "
                       f"{result['n_holdout']} held-out samples only: κ {fmt(b['cohen_kappa'], b['kappa_ci'])} → "
                       f"{fmt(a['cohen_kappa'], a['kappa_ci'])}. {html.escape(change)}")
        self.summary.setText(self.summary.text().split("<br><i>Aligning")[0] + f"<br><b>Align:</b> {message}")
        self.aligned.emit(result)

    def _align_failed(self, exc: BaseException) -> None:
        try:
            self.align_button.setEnabled(True)
            self.summary.setText(self.summary.text().split("<br><i>Aligning")[0]
                                 + f"<br><b>Align failed:</b> {html.escape(describe_error(exc))}")
        except RuntimeError:
            pass


def _agreement(library: Library, run_id: int, key: str, grader: str | None = None) -> JsonObject:
    """The report, in the task's thread: the statistics (scipy: over a second of imports) load on
    the first report, not before the window's first paint."""
    from studio.core.engine.agreement import agreement

    return agreement(library, run_id, key, grader=grader)
