"""A judge's report card: its newest bias-probe report, and a button to probe it again.

The numbers are the ones ``grader-studio probe`` prints (``studio.core.engine.probes``), read from
the stored reports, so a probe run from the command line shows here too. Probing makes several
judge calls per sample: it runs on the task pool, never on the GUI thread, and can be cancelled.
Every cell is plain text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from studio.core.engine.summary import stored_summary
from studio.core.json_types import JsonObject
from studio.core.kinds import ByKind, get_kind
from studio.core.models import GraderDefinition, JuryGrader, RunInfo
from studio.core.outside import shown_time

from ..context import AppContext
from ..eliding import ElidedCombo
from ..messages import Messages
from ..qt import Qt, QtWidgets
from ..samples import preferred_dataset

if TYPE_CHECKING:
    from studio.core.store.endpoint_trust import Pending
    from studio.core.store.probe_reports import ProbeRecord

COLUMNS = ("Probe", "n", "Measure", "95% interval", "Verdicts flipped", "Result")
EXPLAIN = {
    "verbosity": "score shift when a neutral paragraph pads the answer",
    "reference": "score shift when the reference is another sample's",
    "position": "agreement under the swap; share picking the first-shown answer",
    "repeat": "Fleiss' kappa over repeated calls; score sd",
}


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def probe_rows(report: JsonObject) -> list[list[str]]:
    """The table's rows for one report (plain strings, one row per probe)."""
    rows = []
    for name, probe in report.get("probes", {}).items():
        if not isinstance(probe, dict):
            continue
        if name == "position":
            measure = (f"consistency {_num(probe.get('position_consistency'))}, "
                       f"first position {_num(probe.get('first_position_rate'))}")
            interval = _interval(probe.get("first_position_rate_ci"))
        elif name == "repeat":
            measure = f"kappa {_num(probe.get('kappa'))}, sd {_num(probe.get('sd'))}"
            interval = _interval(probe.get("kappa_ci"))
        else:
            measure = f"shift {_num(probe.get('mean_shift'), signed=True)}"
            interval = _interval(probe.get("ci"))
        flips = probe.get("flip_rate")
        result = {True: "Flagged", False: "No bias found", None: "No verdict"}[probe.get("flag")]
        rows.append([name, str(probe.get("n", 0)), measure, interval,
                     "n/a" if flips is None else f"{flips:.0%}", result])
    return rows


JUROR_COLUMNS = ("Juror", "Model", "Answered", "Failed", "Tokens", "Accuracy vs labels", "Cohen's kappa vs labels")


def juror_rows(panel: JsonObject, per_juror: JsonObject) -> list[list[str]]:
    """One row per juror of a jury run (plain strings)."""
    rows = []
    for name, juror in (panel.get("per_juror") or {}).items():
        labels = per_juror.get(name) or {}
        accuracy = labels.get("accuracy")
        rows.append([
            name, str(juror.get("model") or juror.get("endpoint") or ""), str(juror.get("answered", 0)),
            str(juror.get("failed", 0)), f"{juror.get('prompt_tokens', 0):,} + {juror.get('completion_tokens', 0):,}",
            "n/a (no labels)" if accuracy is None else f"{accuracy:.1%} of {labels.get('n')}",
            "n/a" if labels.get("cohen_kappa") is None else
            f"{labels['cohen_kappa']:.3f} {_interval(labels.get('cohen_kappa_ci'))}".strip(),
        ])
    return rows


class ReportCard(QtWidgets.QWidget):
    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.key: str | None = None
        self.cancel: threading.Event | None = None
        self._ticket = 0
        #: asks before the key goes to an endpoint a teammate changed (the window's Messages)
        self.approve_endpoint: Callable[[Pending], bool] = Messages(self).approve_endpoint
        self.dataset = ElidedCombo(14)  # a long dataset name elides in the middle, whole in its tooltip
        self.limit = QtWidgets.QSpinBox(minimum=2, maximum=100_000, value=50)
        self.limit.setToolTip("probe only the first N samples (each probe makes several calls per sample)")
        self.run_button = QtWidgets.QPushButton("Run probes")
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.status = QtWidgets.QLabel()
        self.status.setObjectName("hint")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.jury_status = QtWidgets.QLabel()
        self.jury_status.setTextFormat(Qt.TextFormat.PlainText)
        self.jury_status.setWordWrap(True)
        self.jurors = QtWidgets.QTableWidget(0, len(JUROR_COLUMNS))
        self.jurors.setHorizontalHeaderLabels(list(JUROR_COLUMNS))
        self.jurors.verticalHeader().setVisible(False)
        self.jurors.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.jurors.horizontalHeader().setStretchLastSection(True)
        for widget in (self.jury_status, self.jurors):
            widget.setVisible(False)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Dataset"))
        top.addWidget(self.dataset)
        top.addWidget(QtWidgets.QLabel("Samples"))
        top.addWidget(self.limit)
        top.addWidget(self.run_button)
        top.addWidget(self.cancel_button)
        top.addStretch(1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.jury_status)
        layout.addWidget(self.jurors, 1)
        self.run_button.clicked.connect(self.run_probes)
        self.cancel_button.clicked.connect(self._cancel)
        ctx.datasets_changed.connect(self._load_datasets)
        self._load_datasets()

    def _load_datasets(self) -> None:
        current = self.dataset.currentText()
        self.dataset.clear()
        self.dataset.addItems([d.name for d in self.ctx.library.datasets.list()])
        if current:
            self.dataset.setCurrentText(current)

    def set_grader(self, key: str, definition: GraderDefinition) -> None:
        """Show the newest report of this grader (loaded off the GUI thread)."""
        self.key = key
        self._ticket += 1
        ticket = self._ticket
        judge = get_kind(definition.kind).probed  # the kind's descriptor: bias probes measure it
        self.run_button.setEnabled(judge and self.cancel is None)
        self.table.setRowCount(0)
        self.jurors.setRowCount(0)
        panel = _PANELS.of(definition)
        for widget in (self.jury_status, self.jurors):
            widget.setVisible(panel is not None)
        if panel is not None:
            panel(self, key, ticket)
        if not judge:
            self.status.setText("Bias probes measure LLM judges and juries; this grader is neither.")
            return
        self.status.setText("Loading the last report…")
        # a dataset the judge reads (issue 35: a QA judge opened on json-outputs)
        names = [self.dataset.itemText(i) for i in range(self.dataset.count())]
        choice = preferred_dataset(list(definition.tags), definition.kind, names)
        if choice is not None:
            self.dataset.setCurrentIndex(names.index(choice))
        engine = self.ctx.library.engine

        def load() -> ProbeRecord | None:
            from studio.core.store.probe_reports import ProbeReportRepository

            return ProbeReportRepository(engine).latest(key)

        def show(record: ProbeRecord | None) -> None:
            if ticket == self._ticket:
                self._show_record(record)

        def failed(exc: BaseException) -> None:
            if ticket == self._ticket:
                self.status.setText(f"Could not read the reports: {exc}")

        self.ctx.tasks.run(load, show, failed)

    def _load_jury(self, key: str, ticket: int) -> None:
        """The jurors of this jury's newest finished run: agreement, labels, tokens."""
        library = self.ctx.library
        self.jury_status.setText("Loading the jurors of the last run…")

        def load() -> tuple[RunInfo, JsonObject] | None:
            from studio.core.engine.jury import juror_agreement

            for run in library.runs.list(grader_key=key, limit=20):
                if stored_summary(run).jury:
                    return run, juror_agreement(library, run.id)
            return None

        def show(found: tuple[RunInfo, JsonObject] | None) -> None:
            if ticket != self._ticket:
                return
            if found is None:
                self.jury_status.setText("Jurors: no run of this jury yet. Run it to see how its jurors agree.")
                return
            run, per_juror = found
            self.show_jury(run.id, run.dataset, stored_summary(run).jury, per_juror)

        def failed(exc: BaseException) -> None:
            if ticket == self._ticket:
                self.jury_status.setText(f"Could not read the jury's runs: {exc}")

        self.ctx.tasks.run(load, show, failed)

    def show_jury(self, run_id: int, dataset: str, panel: JsonObject, per_juror: JsonObject) -> None:
        self.jury_status.setText(
            f"Jurors in run {run_id} on {dataset}: Fleiss kappa {_num(panel.get('fleiss_kappa'))} "
            f"{_interval(panel.get('fleiss_kappa_ci'))}, Krippendorff alpha {_num(panel.get('krippendorff_alpha'))} "
            f"{_interval(panel.get('krippendorff_alpha_ci'))}, {panel.get('ties', 0)} tie(s).")
        rows = juror_rows(panel, per_juror)
        self.jurors.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.jurors.setItem(r, c, QtWidgets.QTableWidgetItem(text))
        self.jurors.resizeColumnsToContents()
        self.jurors.horizontalHeader().setStretchLastSection(True)

    def _show_record(self, record: ProbeRecord | None) -> None:
        if record is None:
            self.status.setText("Never probed. Pick a dataset and press Run probes "
                                "(or run `grader-studio probe` on the command line).")
            return
        self.dataset.setCurrentText(record.dataset)
        when = shown_time(record.created_at)
        self.show_report(record.report, f"Probed on {record.dataset} ({record.report.get('samples')} samples) "
                                        f"at {when} UTC, version {record.grader_version}"
                                        + (f", endpoint {record.endpoint}" if record.endpoint else ""))

    def show_report(self, report: JsonObject, heading: str) -> None:
        rows = probe_rows(report)
        reasons = [str(p.get("reason") or "") for p in report.get("probes", {}).values() if isinstance(p, dict)]
        flagged = [r[0] for r in rows if r[5].startswith("Flagged")]
        verdict = ("Biased: " + ", ".join(flagged)) if flagged else "No probe found a bias"
        errors = report.get("errors") or {}
        left_out = f" Samples that errored were left out ({', '.join(f'{k}: {v}' for k, v in errors.items())})." \
            if errors else ""
        self.status.setText(f"{heading}. {verdict}.{left_out}")
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                if c == 0:
                    item.setToolTip(EXPLAIN.get(text, ""))
                if c == len(row) - 1 and reasons[r]:
                    item.setToolTip(reasons[r])
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)

    def run_probes(self) -> None:
        if self.key is None or not self.dataset.currentText():
            return
        key, dataset, limit = self.key, self.dataset.currentText(), self.limit.value()
        library = self.ctx.library
        cancel = self.cancel = threading.Event()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Probing {key} on {dataset}…")

        def work() -> JsonObject:  # the report, as stored and printed with --json
            from studio.core.engine.probes import probe_judge

            return probe_judge(library, key, dataset, limit=limit, cancel=cancel)

        # shown while the same grader is open: the page may be set again meanwhile (the live view
        # re-reads an open grader when the library changes, as this probe's own report does), which
        # moves the ticket but leaves this report the newest of this grader
        def done(report: JsonObject) -> None:
            self._finished()
            if self.key == key:
                self.show_report(report, f"Probed on {dataset} ({report['samples']} samples) just now")

        def failed(exc: BaseException) -> None:
            from ..dialogs.endpoint_trust import approved_now

            self._finished()
            if self.key == key:
                self.status.setText(f"The probes stopped: {exc}")
                if approved_now(self.approve_endpoint, exc):
                    self.run_probes()  # approved: now the key may go there

        self.ctx.tasks.run(work, done, failed)

    def _cancel(self) -> None:
        if self.cancel is not None:
            self.cancel.set()

    def _finished(self) -> None:
        self.cancel = None
        self.cancel_button.setEnabled(False)
        self.run_button.setEnabled(self.key is not None)


#: the report card's extra panel of a kind, keyed by kind (``kinds.ByKind``): a jury's jurors table
_PANELS: ByKind[None] = ByKind("report card panel")


@_PANELS.on(JuryGrader)
def _jury_panel(card: ReportCard, key: str, ticket: int) -> None:
    card._load_jury(key, ticket)
