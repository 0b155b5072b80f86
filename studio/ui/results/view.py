"""``ResultsView``: a run's aggregates and histogram, the filterable SQL-backed grid, the detail pane."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject
from studio.core.store.reports import export_csv
from studio.core.store.results_query import (
    ResultFilter,
    ResultQuery,
    RunSummary,
    load_result,
    load_summary,
)

from ..context import AppContext
from ..eliding import ElidedLabel
from ..file_dialogs import save_file
from ..messages import Messages, describe_error
from ..qt import Qt, QtCore, QtGui, QtWidgets, Signal, tool_button
from ..suites.grid import SuiteGrid
from .ci_reports import ReportButton, run_figures
from .column_chooser import ColumnChooser, add_chooser
from .columns import COLUMN_INDEX, COLUMNS
from .detail import DetailPane
from .filters import FilterBar
from .labeling import Labeler
from .model import ResultsModel
from .summary import SummaryBar

if TYPE_CHECKING:
    from studio.core.store.library import Library

#: the detail pane sits beside the grid (issue 24: under it, a 1280x800 screen showed 4 rows); the key
#: changed with the orientation so a size saved for the old bottom pane is not applied sideways
SPLITTER_KEY = "results/detail_side_splitter"
#: the grid's share of the width at first: its short columns and the start of the input
GRID_SHARE = 0.55
SUMMARY_INTERVAL_S = 0.5
#: the detail pane's narrowest when the grid widens for a suite run's score columns
DETAIL_MIN = 260
HEADER_PAD = 30  # a header's margins and its sort indicator
CELL_PAD = 14  # a cell's margins either side of its text  # a streaming run's aggregates and histogram refresh at most twice a second


class ResultsView(QtWidgets.QWidget):
    """Shows one run (``set_run``); ``refresh()`` pulls in results written since (a live run)."""

    summary_loaded = Signal(object)   # RunSummary
    exported = Signal(str, int)       # path, rows written
    result_selected = Signal(int)     # result id shown in the detail pane

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None,
                 messages: Messages | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: int | None = None
        self.dataset_id = 0
        self._run_total = 0  # the run's samples: the widest index the # column shows
        self.live = False
        self.summary: RunSummary | None = None
        self._summary_busy = False
        self._summary_after_ids = False
        self._summary_again = False
        self._summary_at = 0.0
        self._shown_result: int | None = None
        self.shown_result: JsonObject | None = None  # the result the detail pane shows (its run, its sample)

        self.model = ResultsModel(ctx, self)
        self.summary_bar = SummaryBar()
        self.filters = FilterBar()
        self.export_button = QtWidgets.QPushButton("Export CSV…")
        self.export_button.setToolTip("Write the results shown (this filter and sort) to a CSV file")
        self.report_button = ReportButton(ctx)
        self.table = QtWidgets.QTableView()
        self._setup_table()
        self.empty = QtWidgets.QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setStyleSheet("color: #8a8f98; font-size: 14px; padding: 24px")
        self.grid_stack = QtWidgets.QStackedWidget()
        self.grid_stack.addWidget(self.table)
        self.grid_stack.addWidget(self.empty)
        self.detail = DetailPane()
        # one line that elides, the whole text in its tooltip: an export's or a query's error can be
        # thousands of characters on one line, and a plain label asked for all of them as its minimum
        # width (the window grew to 33,000 px)
        self.status_line = ElidedLabel()
        self.status_line.setStyleSheet("color: #8a8f98")
        self.report_button.saved.connect(lambda path: self.status_line.setText(f"Saved the report to {path}"))
        self.report_button.failed.connect(lambda why: self.status_line.setText(f"Report not saved: {why}"))

        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.filters, 1)
        self.columns_button = tool_button("Columns")
        self.columns_button.setToolTip("Choose the grid's columns (also in a column header's right-click menu)")
        self.columns_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        columns_menu = QtWidgets.QMenu(self.columns_button)
        def fill_columns() -> None:
            columns_menu.clear()
            add_chooser(columns_menu, self)

        columns_menu.aboutToShow.connect(fill_columns)
        self.columns_button.setMenu(columns_menu)
        bar.addWidget(self.columns_button)
        # in the summary band, beside the figures they report, one above the other: the filter bar has
        # no width to spare at 1280 with the runs list shown (issue 35: Export CSV… was off the edge)
        run_actions = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(run_actions)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.report_button)
        column.addWidget(self.export_button)
        self.summary_bar.add_action(run_actions)
        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.grid_stack)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        # the grid keeps its rows in view and the pane its height for a thread or a rationale; the
        # pane keeps the width the analyst gives it across runs and sessions
        self._sized = False
        saved = ctx.settings.value(SPLITTER_KEY)
        if saved is not None:
            self._sized = self.splitter.restoreState(saved)
        self.splitter.splitterMoved.connect(self._remember_split)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary_bar)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)
        self.labeler = Labeler(self, messages)  # human labels by keyboard, beside the thread and rationale
        self.columns = ColumnChooser(self)  # which columns show (ui/results/column_chooser.py)
        self.columns.apply()
        self._grid_want = 0  # the width a suite run's score columns need (fit_grid_to)
        self.suite_grid = SuiteGrid(self)  # a suite run: a score column per grader (ui/suites/grid.py)
        layout.addWidget(self.labeler)
        layout.addWidget(self.status_line)

        self.filters.changed.connect(self._on_filter)
        self.export_button.clicked.connect(self._choose_export)
        self.model.loaded.connect(self._on_loaded)
        self.model.busy.connect(self._on_busy)
        self.model.failed.connect(self._on_failed)
        self.model.modelReset.connect(self._on_reset)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self._show_empty("Choose a run to see its results.")
        self.export_button.setEnabled(False)

    def _remember_split(self, *_: object) -> None:
        self._sized = True
        self.ctx.settings.setValue(SPLITTER_KEY, self.splitter.saveState())

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if not self._sized and self.splitter.width() > 0:  # the first size, from the width there is
            total = sum(self.splitter.sizes()) or self.splitter.width()
            grid = int(total * GRID_SHARE)
            self.splitter.setSizes([grid, total - grid])
        if self._grid_want:
            self.suite_grid.relayout()  # the score columns to the new width, all in view

    def detail_min(self) -> int:
        """The detail pane's least width beside a suite run's widened grid."""
        return DETAIL_MIN

    def fit_grid_to(self, width: int) -> None:
        """Widen the grid to ``width`` px of columns (a suite run's scores, all in view) as far as the
        detail pane keeps ``DETAIL_MIN``; 0 stops asking."""
        self._grid_want = width
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if not width or len(sizes) != 2 or not total:
            return
        needed = width + 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()
        grid = min(needed, total - DETAIL_MIN)
        if grid > sizes[0]:
            self.splitter.setSizes([grid, total - grid])

    def _setup_table(self) -> None:
        table = self.table
        table.setModel(self.model)
        table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        # a short grader title that still has not the room elides in the middle; its tooltip has it whole
        table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setAlternatingRowColors(True)
        table.setHorizontalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerPixel)
        vertical = table.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(table.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Interactive)
        header.setHighlightSections(False)
        header.setSortIndicator(COLUMN_INDEX["idx"], Qt.SortOrder.AscendingOrder)
        metrics = header.fontMetrics()
        for i, column in enumerate(COLUMNS):  # never narrower than the title and a sort arrow
            header.resizeSection(i, max(column.width, metrics.horizontalAdvance(column.title) + HEADER_PAD))
        table.setSortingEnabled(True)

    # -- public API -----------------------------------------------------------------------------------
    def set_run(self, run_id: int | None, *, live: bool = False) -> None:
        """Show ``run_id`` (None: nothing). ``live`` while the run is still writing results."""
        self.live = live
        if run_id == self.run_id:
            if run_id is not None:
                self.refresh(force_summary=True)
            return
        self.run_id = run_id
        self.report_button.set_run(run_id)
        self.summary = None
        self.detail.clear()
        self._shown_result = None
        self.shown_result = None
        if run_id is None:
            self.labeler.set_run(None)
            self.model.set_query(None)
            self.summary_bar.clear()
            self.export_button.setEnabled(False)
            self._show_empty("Choose a run to see its results.")
            return
        try:
            raw = self.ctx.library.runs.raw(run_id)
            self.dataset_id = raw.dataset_id
            self._run_total = int(raw.total or 0)
        except Exception as exc:  # a run deleted under us, a locked file: say so, show nothing
            self.run_id = None
            self.labeler.set_run(None)
            self.model.set_query(None)
            self.summary_bar.clear(describe_error(exc))
            return
        self.labeler.set_run(run_id)
        self.suite_grid.show_run(run_id)
        header = self.table.horizontalHeader()
        column = COLUMNS[header.sortIndicatorSection()] if 0 <= header.sortIndicatorSection() < len(COLUMNS) \
            else COLUMNS[0]
        self.model.set_query(ResultQuery(
            run_id, self.dataset_id, self.filters.value(), column.key,
            header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder))
        self.summary_bar.clear("Loading run…")
        self.export_button.setEnabled(True)
        # the aggregates wait for the ids: run side by side on two cores, the two scans of a big run
        # slowed the grid's opening down by half
        self._summary_after_ids = True

    def refresh(self, *, force_summary: bool = False) -> None:
        """Pull in what the run wrote since the last look: new ids now, aggregates at most 2/s."""
        if self.run_id is None:
            return
        self.model.refresh()
        if force_summary or time.monotonic() - self._summary_at >= SUMMARY_INTERVAL_S:
            self._load_summary()

    def set_filter(self, flt: ResultFilter) -> None:
        self.filters.set_value(flt)

    def sort_by(self, key: str, descending: bool = False) -> None:
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        self.table.sortByColumn(COLUMN_INDEX[key], order)

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        if index.isValid():
            self.table.setCurrentIndex(index)
            self.table.scrollTo(index)

    def export_to(self, path: str | Path) -> None:
        """Write the shown results to ``path`` in the background; ``exported`` says when it is done."""
        query = self.model.query
        if query is None:
            return
        engine = self.ctx.library.engine
        self.status_line.setText(f"Exporting to {path}…")
        self.export_button.setEnabled(False)

        def done(count: int) -> None:
            self.export_button.setEnabled(True)
            self.status_line.setText(f"Exported {count:,} results to {path}")
            self.exported.emit(str(path), count)

        def failed(exc: BaseException) -> None:
            self.export_button.setEnabled(True)
            self.status_line.setText(f"Export failed: {describe_error(exc)}")

        self.ctx.tasks.run(lambda: export_csv(engine, query, path), done, failed)

    # -- reactions ------------------------------------------------------------------------------------
    def _choose_export(self) -> None:
        if self.run_id is None:
            return
        path = save_file(
            self, "Export results", f"run-{self.run_id}.csv", "CSV files (*.csv)")
        if path:
            self.export_to(path)

    def _load_summary(self) -> None:
        if self._summary_busy:
            self._summary_again = True
            return
        run_id, live = self.run_id, self.live
        if run_id is None:
            return
        self._summary_busy = True
        self._summary_again = False
        self._summary_at = time.monotonic()
        library = self.ctx.library
        self.ctx.tasks.run(lambda: _summary_and_figures(library, run_id, live), self._on_summary,
                           self._on_summary_error)

    def _on_summary(self, summary: RunSummary) -> None:
        try:
            self._summary_busy = False
            if summary.run.id == self.run_id:
                self.summary = summary
                self.summary_bar.set_summary(summary)
                self.summary_loaded.emit(summary)
                self._update_count()
            if self._summary_again:
                self._load_summary()
        except RuntimeError:  # the view was deleted while the query ran
            pass

    def _on_summary_error(self, exc: BaseException) -> None:
        try:
            self._summary_busy = False
            self.summary_bar.clear(describe_error(exc))
        except RuntimeError:
            pass

    def _on_filter(self, flt: ResultFilter) -> None:
        self.model.set_filter(flt)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.filters.set_count(self.model.rowCount(), None, busy=True)
        else:
            self._update_count()
            self._summary_after_ids_loaded()

    def _summary_after_ids_loaded(self) -> None:
        if self._summary_after_ids:
            self._summary_after_ids = False
            self._load_summary()

    def _on_failed(self, message: str) -> None:
        self.status_line.setText(f"Query failed: {message}")

    def _update_count(self) -> None:
        shown = self.model.rowCount()
        total = None if self.summary is None else self.summary.run.done
        if total is not None and not self._filtered():
            total = max(total, shown)  # a live run's summary lags the grid by up to half a second
        self.filters.set_count(shown, total, busy=self.model.is_loading)

    def _filtered(self) -> bool:
        query = self.model.query
        return query is not None and not query.filter.empty

    def _on_loaded(self, count: int) -> None:
        self._update_count()
        if count:
            self._fit_index_column(count)
            self.grid_stack.setCurrentWidget(self.table)
        elif self._filtered():
            self._show_empty("No results match this filter.")
        elif self.live:
            self._show_empty("No results yet: they appear here as the run writes them.")
        else:
            self._show_empty("This run has no results.")

    def _fit_index_column(self, count: int) -> None:
        """Widen the # column to the run's largest index (a million-sample run's showed "99…"); never
        narrower than the analyst made it."""
        widest = str(max(count, self._run_total, 1) - 1)
        column = COLUMN_INDEX["idx"]
        header = self.table.horizontalHeader()
        need = self.table.fontMetrics().horizontalAdvance(widest) + CELL_PAD
        if header.sectionSize(column) < need:
            header.resizeSection(column, need)

    def _on_reset(self) -> None:
        if self._shown_result is not None:
            row = self.model.row_of(self._shown_result)
            if row is not None:  # keep the result the analyst was reading across a sort or filter
                self.table.setCurrentIndex(self.model.index(row, 0))
                self.table.scrollTo(self.model.index(row, 0), QtWidgets.QAbstractItemView.ScrollHint.PositionAtCenter)

    def show_no_run(self, message: str) -> None:
        """Nothing to show, and why (the run page: no run exists yet)."""
        self.summary_bar.clear(message)
        self._show_empty(message)

    def _show_empty(self, message: str) -> None:
        self.empty.setText(message)
        self.grid_stack.setCurrentWidget(self.empty)

    def _on_current(self, current: QtCore.QModelIndex, _previous: QtCore.QModelIndex) -> None:
        rid = self.model.result_id(current.row()) if current.isValid() else None
        if rid is None or rid == self._shown_result:
            return
        self._shown_result = rid
        self.shown_result = None
        try:
            result = load_result(self.ctx.library.engine, self.dataset_id, rid)
        except Exception as exc:
            self.detail.clear(describe_error(exc))
            self.result_selected.emit(rid)  # the label bar lets go of the sample it showed
            return
        self.shown_result = result
        self.detail.set_result(result)
        self.result_selected.emit(rid)


def _summary_and_figures(library: Library, run_id: int, live: bool) -> RunSummary:
    """The band's aggregates and histogram, with the verdict, usage and cost ``run`` prints."""
    from studio.core.engine.summary import band_summary

    summary = load_summary(library, run_id, live, band_summary)
    summary.figures = run_figures(library, run_id, summary.aggregates, summary.run)
    return summary
