"""The filter row above the grid: status, score range, text search (debounced), and a match count."""

from __future__ import annotations

from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD
from studio.core.store.results_query import FAILED, ResultFilter

from ..qt import Qt, QtGui, QTimer, QtWidgets, Signal

FAILING = "failing"  # the choice that is not a set of statuses: did not pass (as ``runs show --failed``)
STATUS_CHOICES: tuple[tuple[str, tuple[str, ...] | str, str], ...] = (
    ("All results", (), "Every result of the run"),
    ("Did not pass", FAILING, "Errors, invalid answers, a FAIL, and scores under the run's pass threshold"),
    ("Errors + invalid", FAILED, "Results the grader could not score, and invalid answers"),
    ("Errors", ("error",), "Results the grader could not score"),
    ("Invalid", ("invalid",), "Answers the judge gave in an invalid form"),
    ("Skipped", ("skipped",), "Samples the grader skipped"),
    ("OK", ("ok",), "Results graded without an error, whatever their score"),
)
SEARCH_DELAY_MS = 300


def _score(text: str) -> float | None:
    text = text.strip().replace(",", ".")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


class FilterBar(QtWidgets.QWidget):
    changed = Signal(object)  # ResultFilter

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._last = ResultFilter()
        self._setting = False
        self.status = QtWidgets.QComboBox()
        for label, statuses, tip in STATUS_CHOICES:
            self.status.addItem(label, statuses)
            self.status.setItemData(self.status.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.status.setToolTip("Which results the grid shows")
        self.min_score = QtWidgets.QLineEdit()
        self.max_score = QtWidgets.QLineEdit()
        for edit, hint, tip in ((self.min_score, "min", "Only scores at least this"),
                                (self.max_score, "max", "Only scores at most this")):
            edit.setPlaceholderText(hint)
            edit.setToolTip(tip)
            edit.setValidator(QtGui.QDoubleValidator(edit))
            edit.setClearButtonEnabled(True)
            # room for the placeholder or a score like 0.125 beside the clear button, and no more
            edit.setFixedWidth(edit.fontMetrics().horizontalAdvance("0.125") + 44)
        self.labels = QtWidgets.QComboBox()  # the human-label filters
        for text, value in (("All labels", ""), ("Unlabelled", "unlabelled"), ("Disagreements", "disagreements"),
                            ("Unstable", "unstable")):
            self.labels.addItem(text, value)
        self.labels.setToolTip("Human labels. Disagreements: the human's PASS/FAIL label differs from the judge's "
                               "verdict. Unstable: graded differently across the runs of a run --repeat")
        self.label_set_id: int | None = None  # set by the view for the run's dataset
        self.pass_threshold = DEFAULT_PASS_THRESHOLD
        self.repeat_runs: tuple[int, ...] = ()  # set by the view when the run is one of a repeat group
        self.grader_conditions: tuple[tuple[str, str, float], ...] = ()  # a suite run's (ui/suites/grid.py)
        self.search = QtWidgets.QLineEdit()
        self.search.setPlaceholderText("Search…")
        self.search.setToolTip("Search the sample id, input, completion, expected answer, error and rationale")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(self.search.fontMetrics().horizontalAdvance("Search…") + 48)
        self.count = QtWidgets.QLabel()
        self.count.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DELAY_MS)
        self._debounce.timeout.connect(self._emit)
        self.status.currentIndexChanged.connect(self._emit)
        self.labels.currentIndexChanged.connect(self._emit)
        for edit in (self.min_score, self.max_score, self.search):
            edit.textChanged.connect(self._debounce.start)
            edit.returnPressed.connect(self._emit)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addWidget(QtWidgets.QLabel("Score"))
        layout.addWidget(self.min_score)
        layout.addWidget(QtWidgets.QLabel("–"))
        layout.addWidget(self.max_score)
        layout.addWidget(self.labels)
        layout.addWidget(self.search, 1)
        layout.addWidget(self.count)

    def value(self) -> ResultFilter:
        choice = self.status.currentData()
        return ResultFilter(
            statuses=() if choice == FAILING else tuple(choice or ()),
            failing=choice == FAILING,
            min_score=_score(self.min_score.text()),
            max_score=_score(self.max_score.text()),
            text=self.search.text().strip(),
            labels=self.labels.currentData() or "",
            label_set_id=self.label_set_id,
            pass_threshold=self.pass_threshold,
            repeat_runs=self.repeat_runs,
            graders=self.grader_conditions,
        )

    def set_value(self, flt: ResultFilter) -> None:
        """Set every control at once and emit one change (menus, tests)."""
        self._setting = True
        try:
            wanted = FAILING if flt.failing else flt.statuses
            index = next((i for i, (_, s, _tip) in enumerate(STATUS_CHOICES) if s == wanted), 0)
            self.status.setCurrentIndex(index)
            self.min_score.setText("" if flt.min_score is None else f"{flt.min_score:g}")
            self.max_score.setText("" if flt.max_score is None else f"{flt.max_score:g}")
            self.search.setText(flt.text)
            self.labels.setCurrentIndex(max(0, self.labels.findData(flt.labels)))
        finally:
            self._setting = False
        self._debounce.stop()
        self._emit()

    def _emit(self) -> None:
        if self._setting:
            return
        self._debounce.stop()
        value = self.value()
        if value != self._last:
            self._last = value
            self.changed.emit(value)

    def set_count(self, shown: int, total: int | None, busy: bool = False) -> None:
        if busy:
            self.count.setText("<span style='color:#8a8f98'>querying…</span>")
        elif total is None or shown == total:
            self.count.setText(f"{shown:,} results")
        else:
            self.count.setText(f"{shown:,} of {total:,} results")
