"""``ResultsModel``: the results grid's table model, holding result ids and paging rows from SQLite.

Anki's browser model: the ordered ids of the current sort/filter are read by a background task
(``query.load_ids``); ``data()`` loads the page of rows around the one asked for, keeps a few pages
in a small cache, and forgets the oldest. A million-row run therefore costs 8 MB of ids and a
hundred materialised rows, whatever the view scrolls to.

While a run streams, ``refresh()`` re-reads the ids under the same query; rows appended at the end
arrive as ``rowsInserted`` and anything else as a layout change that keeps the selection on its
result. Refreshes never overlap: one asked for during a load runs once that load is done.

Each load of a million ids allocates a few blocks of megabytes (SQLite's JSON text, its Python copy,
the new array) while the old array is still shown. glibc's allocator raises its mmap threshold to the
largest block freed so far, so from the second load on such blocks come from the heap, where freed
space stays in the process: every sort ratcheted the window up (at 1M, 122 -> 139 MB after two sorts,
a peak of 168 MB). ``_big_blocks_unmapped`` fixes the threshold, so a block of a megabyte or more is
mapped alone and given back when freed: the window stays at its size after any number of sorts.
"""

from __future__ import annotations

import sys
from array import array

from sqlalchemy.exc import SQLAlchemyError

from studio.core.store.results_query import (
    CELL_CHARS,
    IdSnapshot,
    ResultFilter,
    ResultQuery,
    ResultRow,
    load_ids,
    load_rows,
)

from ..context import AppContext
from ..messages import describe_error
from ..qt import QObject, Qt, QtCore, Signal
from .columns import COLUMN_INDEX, COLUMNS, Column
from .status import status_colour, status_tint

PAGE_ROWS = 100
CACHE_ROWS = 600  # six pages: a screenful either side of the visible rows
#: blocks this big or bigger are mapped alone and returned to the system when freed (glibc's M_MMAP_THRESHOLD)
BIG_BLOCK_BYTES = 1 << 20
_M_MMAP_THRESHOLD = -3  # glibc's malloc.h
_unmapped: bool | None = None


def _big_blocks_unmapped() -> bool:
    """Fix glibc's mmap threshold at ``BIG_BLOCK_BYTES`` (once a process; elsewhere nothing): the
    dynamic threshold would keep the id loads' freed megabytes in the heap (see the module's doc)."""
    global _unmapped
    if _unmapped is None:
        _unmapped = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _unmapped = bool(ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, BIG_BLOCK_BYTES))
            except (OSError, AttributeError):  # not glibc (musl has no mallopt): its own allocator's way
                pass
    return _unmapped

_ROLE = Qt.ItemDataRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_STATUS_COL = COLUMN_INDEX["status"]
_ERROR_COL = COLUMN_INDEX["error"]

ResultIdRole = int(_ROLE.UserRole) + 1
#: a score cell's verdict coloured as the status it reads like
_VERDICT_STATUS = {"pass": "ok", "fail": "error"}


class ResultsModel(QtCore.QAbstractTableModel):
    loaded = Signal(int)       # ids applied: how many rows the grid now shows
    busy = Signal(bool)        # a query is running (sort / filter / open)
    failed = Signal(str)       # the query failed: a sentence for the status line

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        _big_blocks_unmapped()
        self.ctx = ctx
        self._query: ResultQuery | None = None      # what the user asked for
        self._shown: ResultQuery | None = None      # what ``_ids`` holds
        self._ids: array[int] = array("q")
        self._rows: dict[int, ResultRow] = {}
        self._cells: dict[int, tuple[str, ...]] = {}
        self._loading = False
        self._again = False
        self.last_query_seconds = 0.0
        self.rows_fetched = 0  # rows ever read for cells (tests and the benchmark check it stays small)
        self.extra_columns: tuple[Column, ...] = ()
        self.replaced: dict[str, Column] = {}

    # -- what is shown ----------------------------------------------------------------------------
    @property
    def query(self) -> ResultQuery | None:
        return self._query

    @property
    def is_loading(self) -> bool:
        return self._loading

    def set_query(self, query: ResultQuery | None) -> None:
        """Show ``query``'s results (None empties the grid); the ids load off the GUI thread."""
        if query == self._query and query is not None:
            return
        self._query = query
        if query is None:
            self._apply(IdSnapshot(query, array("q"), 0.0), reset=True)  # type: ignore[arg-type]
            return
        self._request()

    def set_run(self, run_id: int | None, dataset_id: int = 0) -> None:
        if run_id is None:
            self.set_query(None)
            return
        keep = self._query if self._query is not None and self._query.run_id == run_id else None
        self.set_query(keep or ResultQuery(run_id, dataset_id))

    @property
    def columns(self) -> tuple[Column, ...]:
        """The grid's columns: the fixed ones, then a suite run's one per grader (ui/suites/grid.py;
        the view shows them beside the score)."""
        fixed = COLUMNS if not self.replaced else tuple(self.replaced.get(c.key, c) for c in COLUMNS)
        return fixed + self.extra_columns

    def set_extra_columns(self, extra: tuple[Column, ...], replaced: dict[str, Column] | None = None) -> None:
        """A suite run's grader columns (appended) and fixed columns drawn differently (``replaced``
        by key: a suite's Score is the overall alone)."""
        if extra != self.extra_columns or (replaced or {}) != self.replaced:
            self.beginResetModel()
            self.extra_columns = extra
            self.replaced = replaced or {}
            self._rows.clear()
            self._cells.clear()
            self.endResetModel()

    def set_filter(self, flt: ResultFilter) -> None:
        if self._query is not None:
            self.set_query(self._query.with_filter(flt))

    def refresh(self) -> None:
        """Re-read the ids under the current query (new results of a streaming run)."""
        if self._query is not None:
            self._request()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if self._query is None or not 0 <= column < len(self.columns):
            return
        self.set_query(self._query.with_sort(self.columns[column].key, order == Qt.SortOrder.DescendingOrder))

    def forget_rows(self) -> None:
        """Drop the cached cells (a label changed) so visible rows are read again."""
        self._rows.clear()
        self._cells.clear()
        if self._ids:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._ids) - 1, len(self.columns) - 1))

    def result_id(self, row: int) -> int | None:
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def row_of(self, result_id: int) -> int | None:
        try:
            return self._ids.index(result_id)
        except ValueError:
            return None

    def materialised_rows(self) -> int:
        return len(self._rows)

    def clear_cache(self) -> None:
        self._rows.clear()
        self._cells.clear()

    # -- loading ids --------------------------------------------------------------------------------
    def _request(self) -> None:
        if self._loading:
            self._again = True
            return
        query = self._query
        if query is None:
            return
        self._loading = True
        self._again = False
        self.busy.emit(True)
        engine = self.ctx.library.engine
        self.ctx.tasks.run(lambda: load_ids(engine, query), self._on_ids, self._on_error)

    def _on_ids(self, snapshot: IdSnapshot) -> None:
        try:
            self._loading = False
            self.last_query_seconds = snapshot.seconds
            if snapshot.query == self._query:
                self._apply(snapshot, reset=snapshot.query != self._shown)
            if self._again or snapshot.query != self._query:
                self._request()
            else:
                self.busy.emit(False)
        except RuntimeError:  # the model was deleted while the query ran
            pass

    def _on_error(self, exc: BaseException) -> None:
        try:
            self._loading = False
            self.busy.emit(False)
            self.failed.emit(describe_error(exc))
        except RuntimeError:
            pass

    def _apply(self, snapshot: IdSnapshot, reset: bool) -> None:
        new = snapshot.ids
        old = self._ids
        if reset or self._shown is None:
            self.beginResetModel()
            self._ids = new
            self._shown = snapshot.query
            self.clear_cache()
            self.endResetModel()
        elif len(new) >= len(old) and new[: len(old)] == old:
            if len(new) > len(old):  # the streaming common case: results appended in order
                self.beginInsertRows(QtCore.QModelIndex(), len(old), len(new) - 1)
                self._ids = new
                self.endInsertRows()
        else:
            self._relayout(new)
        self.loaded.emit(len(self._ids))

    def _relayout(self, new: array[int]) -> None:
        """Swap in a reordered/grown id list, keeping persistent indexes (selection) on their result."""
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        rows = [_position(new, self._ids[i.row()] if 0 <= i.row() < len(self._ids) else None) for i in persistent]
        self._ids = new  # before index(): it checks rows against the new count
        moved = [self.index(row, i.column()) if row is not None else QtCore.QModelIndex()
                 for i, row in zip(persistent, rows, strict=True)]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    # -- rows -----------------------------------------------------------------------------------------
    def _row(self, row: int) -> tuple[ResultRow, tuple[str, ...]] | None:
        rid = self._ids[row]
        found = self._rows.get(rid)
        if found is None:
            self._fetch_page(row)
            found = self._rows.get(rid)
            if found is None:
                return None
        return found, self._cells[rid]

    def _fetch_page(self, row: int) -> None:
        start = (row // PAGE_ROWS) * PAGE_ROWS
        wanted = [rid for rid in self._ids[start:start + PAGE_ROWS] if rid not in self._rows]
        if self._query is None or not wanted:
            return
        try:
            fetched = load_rows(self.ctx.library.engine, self._query.dataset_id, wanted,
                                self._query.filter.label_set_id)
        except SQLAlchemyError:
            return
        self.rows_fetched += len(fetched)
        for rid, result in fetched.items():
            self._rows[rid] = result
            self._cells[rid] = tuple(c.text(result) for c in self.columns)
        excess = len(self._rows) - CACHE_ROWS
        if excess > 0:  # forget the oldest pages (dicts keep insertion order)
            for rid in list(self._rows)[:excess]:
                del self._rows[rid]
                del self._cells[rid]

    # -- Qt model API -----------------------------------------------------------------------------
    def rowCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            if role == _ROLE.DisplayRole:
                return self.columns[section].title
            if role == _ROLE.ToolTipRole:
                return self.columns[section].tip or self.columns[section].title
            if role == _ROLE.TextAlignmentRole:
                return _RIGHT if self.columns[section].numeric else _LEFT
        return None

    def flags(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex, role: int = _ROLE.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if row >= len(self._ids):
            return None
        if role == ResultIdRole:
            return self._ids[row]
        if role == _ROLE.TextAlignmentRole:
            return _RIGHT if self.columns[col].numeric else _LEFT
        if role not in (_ROLE.DisplayRole, _ROLE.ToolTipRole, _ROLE.ForegroundRole, _ROLE.BackgroundRole):
            return None
        found = self._row(row)
        if found is None:
            return "…" if role == _ROLE.DisplayRole else None
        result, cells = found
        if role == _ROLE.DisplayRole:
            return cells[col]
        if role == _ROLE.ToolTipRole:
            return _tooltip(result, self.columns[col])
        if role == _ROLE.ForegroundRole:
            if col == _STATUS_COL:
                return status_colour(result.status)
            if col == _ERROR_COL and result.error:
                return status_colour("error")
            return None
        if role == _ROLE.BackgroundRole and col == _STATUS_COL:
            return status_tint(result.status)
        if role == _ROLE.BackgroundRole and self.columns[col].verdict is not None:
            verdict = self.columns[col].verdict(result)  # type: ignore[misc]
            return None if verdict is None else status_tint(_VERDICT_STATUS[verdict])
        return None


def _position(ids: array[int], rid: int | None) -> int | None:
    if rid is None:
        return None
    try:
        return ids.index(rid)
    except ValueError:
        return None


def _tooltip(result: ResultRow, column: Column) -> str | None:
    source = column.long_text
    if source is None:
        return None
    text = source(result)
    if not text:
        return None
    if len(text) <= 80:
        return text
    # plain text: the window shows every tooltip as its literal text, wrapped (studio.ui.plain)
    more = " … (the detail pane shows all of it)" if len(text) >= CELL_CHARS else ""
    return text + more
