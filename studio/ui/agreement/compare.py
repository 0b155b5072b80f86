"""``CompareView``: run B against run A on the same dataset (``grader-studio compare``'s numbers).

Mean delta with a paired bootstrap interval, wins/losses/ties, the pass/fail flips with both
rationales side by side and McNemar's exact p; with labels, both runs' κ side by side, the
answer to "did my edit help?". A grader's versions offer "compare with previous run" (``compare_latest``).
Share as HTML… writes the comparison shown as ``runs compare A B --html`` does, in a child process
(ui/runs/share_html.py, as File ▸ Export ▸ Share run as HTML; the window cancels it on close).
"""

from __future__ import annotations

import contextlib
import html
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject

from ..context import AppContext
from ..eliding import ElidedCombo
from ..messages import describe_error
from ..plain import breakable, plain_label, short
from ..qt import Qt, QtWidgets, Signal
from ..suites.grader_pick import GraderPick
from .view import fmt

if TYPE_CHECKING:
    from studio.core.store.library import Library

    from ..runs.share_html import ShareCompareHtml


class CompareView(QtWidgets.QWidget):
    open_sample = Signal(int, str)
    compared = Signal(object)

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.report: JsonObject | None = None
        self.run_a = ElidedCombo(20)  # a run's long name elides in the middle, whole in its tooltip
        self.run_b = ElidedCombo(20)
        self.go = QtWidgets.QPushButton("Compare")
        self.share = QtWidgets.QPushButton("Share as HTML…")
        self.share.setToolTip("Write the comparison shown as one self-contained HTML file to share "
                              "(grader-studio runs compare A B --html)")
        self.share.setEnabled(False)
        self.share_status = plain_label("")
        self.share_status.setWordWrap(True)
        self.share_status.hide()
        self.sharing: ShareCompareHtml | None = None
        self.grader = GraderPick()  # suite runs: one grader, or the overall (ui/suites/grader_pick.py)
        self.summary = QtWidgets.QLabel("Pick two runs on the same dataset.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.table = QtWidgets.QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Sample", "A", "A's rationale", "B", "B's rationale"])
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(QtWidgets.QLabel("A"))
        bar.addWidget(self.run_a, 1)
        bar.addWidget(QtWidgets.QLabel("B"))
        bar.addWidget(self.run_b, 1)
        bar.addWidget(self.grader)
        bar.addWidget(self.go)
        bar.addWidget(self.share)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addWidget(self.share_status)
        layout.addWidget(QtWidgets.QLabel("Pass/fail flips (click one to read B's result)"))
        layout.addWidget(self.table, 1)
        self.go.clicked.connect(self.compute)
        self.share.clicked.connect(lambda: self.share_html())
        self.table.cellClicked.connect(self._open_row)

    def reload(self) -> None:
        chosen = (self.run_a.currentData(), self.run_b.currentData())
        try:
            runs = self.ctx.library.runs.list(limit=500)
        except Exception as exc:
            self.summary.setText(html.escape(breakable(describe_error(exc))))
            return
        for combo, keep in zip((self.run_a, self.run_b), chosen, strict=True):
            combo.blockSignals(True)
            combo.clear()
            for info in runs:
                combo.addItem(f"#{info.id} · {info.label} on {info.dataset}", info.id)
            if keep is not None and combo.findData(keep) >= 0:
                combo.setCurrentIndex(combo.findData(keep))
            combo.blockSignals(False)
        if chosen == (None, None) and len(runs) >= 2:
            same = [r for r in runs if r.dataset == runs[0].dataset and r.grader_key == runs[0].grader_key]
            pair = same[:2] if len(same) >= 2 else runs[:2]
            self.run_b.setCurrentIndex(self.run_b.findData(pair[0].id))
            self.run_a.setCurrentIndex(self.run_a.findData(pair[1].id))

    def compare_runs(self, run_a: int, run_b: int) -> None:
        self.reload()
        self.run_a.setCurrentIndex(self.run_a.findData(run_a))
        self.run_b.setCurrentIndex(self.run_b.findData(run_b))
        self.compute()

    def compare_latest(self, grader_key: str) -> bool:
        """Compare the grader's newest run with its previous run on the same dataset."""
        runs = self.ctx.library.runs.list(grader_key=grader_key, limit=200)
        if not runs:
            self.summary.setText(f"{html.escape(grader_key)} has no runs yet.")
            return False
        newest = runs[0]
        previous = next((r for r in runs[1:] if r.dataset == newest.dataset), None)
        if previous is None:
            self.summary.setText(f"{html.escape(grader_key)} has only one run on {html.escape(newest.dataset)}.")
            return False
        self.compare_runs(previous.id, newest.id)
        return True

    def compute(self) -> None:
        a, b = self.run_a.currentData(), self.run_b.currentData()
        if a is None or b is None:
            return
        library = self.ctx.library
        self.grader.refresh(library, [a, b])
        grader = self.grader.currentData()
        self.summary.setText(f"Comparing run {a} with run {b}…")
        self.ctx.tasks.run(lambda: _compare(library, a, b, grader), self._show, self._failed)

    def _failed(self, exc: BaseException) -> None:
        with contextlib.suppress(RuntimeError):
            self.summary.setText(html.escape(breakable(describe_error(exc))))

    def _show(self, report: JsonObject) -> None:
        try:
            self.report = report
        except RuntimeError:
            return
        a, b = report["run_a"], report["run_b"]
        lines = [f"<b>A</b> run {a['id']} ({html.escape(short(a['grader']))} v{a['grader_version']}) · <b>B</b> run "
                 f"{b['id']} ({html.escape(short(b['grader']))} v{b['grader_version']}) · {html.escape(short(report['dataset']))}",
                 f"n_common {report['n_common']} · mean A {fmt(report['mean_a'])} · mean B {fmt(report['mean_b'])}"
                 f" · <b>Δ {fmt(report['mean_delta'], report['mean_delta_ci'])}</b>",
                 f"B better on {report['wins']}, worse on {report['losses']}, tied on {report['ties']} · "
                 f"{len(report['flips'])} pass/fail flips (A pass → B fail {report['pass_a_fail_b']}, "
                 f"A fail → B pass {report['fail_a_pass_b']}) · McNemar exact p {fmt(report['mcnemar_p'])}"]
        labels = report.get("labels")
        if labels:
            lines.append(f"Labels <b>{html.escape(labels['key'])}</b>: κ A {fmt(labels['kappa_a'], labels['kappa_a_ci'])}"
                         f" · κ B {fmt(labels['kappa_b'], labels['kappa_b_ci'])}<br><b>{html.escape(labels['sentence'])}</b>")
        self.summary.setText("<br>".join(lines))
        flips = report["flips"]
        self.table.setRowCount(len(flips))
        for r, flip in enumerate(flips):
            cells = [flip["sample_id"], flip["a"]["verdict"], flip["a"]["rationale"] or "",
                     flip["b"]["verdict"], flip["b"]["rationale"] or ""]
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QtWidgets.QTableWidgetItem(str(text)))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.share.setEnabled(self.ctx.db_path is not None)
        self.compared.emit(report)

    def share_html(self) -> ShareCompareHtml | None:
        """The comparison shown (its two runs, and its one grader of suite runs), written by a child
        process; the view stays free meanwhile."""
        if self.report is None or self.ctx.db_path is None:
            return None
        from ..file_dialogs import save_file
        from ..runs.share_html import ShareCompareHtml

        a, b = self.report["run_a"]["id"], self.report["run_b"]["id"]
        path = save_file(self, "Share comparison as HTML", f"compare-{a}-{b}.html", "HTML files (*.html)")
        if not path:
            return None
        if self.sharing is not None and self.sharing.is_running():
            self.sharing.cancel()
        self.sharing = ShareCompareHtml(self.ctx.db_path, a, b, path, self.report.get("grader"), self)
        self.sharing.done.connect(lambda where: self._shared(f"Wrote the comparison of runs {a} and {b} to {where}: "
                                                             "open it in any browser."))
        self.sharing.failed.connect(lambda why: self._shared(f"The comparison was not shared: {why}"))
        self.sharing.start()
        self._shared(f"Writing the comparison of runs {a} and {b} as HTML…")
        return self.sharing

    def _shared(self, text: str) -> None:
        self.share_status.setText(text)
        self.share_status.show()

    def _open_row(self, row: int, _column: int) -> None:
        if self.report is not None and 0 <= row < len(self.report["flips"]):
            self.open_sample.emit(self.report["run_b"]["id"], self.report["flips"][row]["sample_id"])


def _compare(library: Library, a: int, b: int, grader: str | None = None) -> JsonObject:
    """The comparison, in the task's thread (the statistics' imports wait for the first one)."""
    from studio.core.engine.agreement import compare

    return compare(library, a, b, grader=grader)
