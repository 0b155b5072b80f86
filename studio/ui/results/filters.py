"""The filter row above the grid: status, score range, text search (debounced), and a match count."""

from __future__ import annotations

from studio.core.store.results_query import FAILED, ResultFilter

from ..qt import Qt, QtGui, QTimer, QtWidgets, Signal

STATUS_CHOICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("All results", ()),
    ("Failed (error + invalid)", FAILED),
    ("Errors", ("error",)),
    ("Invalid", ("invalid",)),
    ("Skipped", ("skipped",)),
    ("OK", ("ok",)),
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
        for label, statuses in STATUS_CHOICES:
            self.status.addItem(label, statuses)
        self.min_score = QtWidgets.QLineEdit()
        self.max_score = QtWidgets.QLineEdit()
        for edit, hint in ((self.min_score, "min score"), (self.max_score, "max score")):
            edit.setPlaceholderText(hint)
            edit.setValidator(QtGui.QDoubleValidator(edit))
            edit.setMaximumWidth(84)
            edit.setClearButtonEnabled(True)
        self.labels = QtWidgets.QComboBox()  # the human-label filters
        for text, value in (("All labels", ""), ("Unlabelled only", "unlabelled"),
                            ("Disagreements only", "disagreements"),
                            ("Unstable (run --repeat)", "unstable")):
            self.labels.addItem(text, value)
        self.labels.setToolTip("Disagreements: the human's PASS/FAIL label differs from the judge's verdict")
        self.label_set_id: int | None = None  # set by the view for the run's dataset
        self.pass_threshold = 0.5
        self.repeat_runs: tuple[int, ...] = ()  # set by the view when the run is one of a repeat group
        self.grader_conditions: tuple[tuple[str, str, float], ...] = ()  # a suite run's (ui/suites/grid.py)
        self.search = QtWidgets.QLineEdit()
        self.search.setPlaceholderText("Search input, completion, expected, error, rationale…")
        self.search.setClearButtonEnabled(True)
        self.count = QtWidgets.QLabel()
        self.count.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.count.setMinimumWidth(150)
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
        return ResultFilter(
            statuses=tuple(self.status.currentData() or ()),
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
            index = next((i for i, (_, s) in enumerate(STATUS_CHOICES) if s == flt.statuses), 0)
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
