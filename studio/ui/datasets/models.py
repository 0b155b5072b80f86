"""Table models of the datasets view: the library's datasets, and one dataset's samples paged from SQL."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from studio.core.models import Sample
from studio.core.outside import shown_time
from studio.core.store.datasets import DatasetRecord, DatasetRepository

from ..context import AppContext
from ..qt import QObject, Qt, QtCore
from ..results.columns import one_line

_ROLE = Qt.ItemDataRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
PAGE_ROWS = 100
CACHE_ROWS = 600


class _HeaderedModel(QtCore.QAbstractTableModel):
    """A table whose columns are its ``HEADERS``, titled along the top."""

    HEADERS: tuple[str, ...] = ()

    def columnCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == _ROLE.DisplayRole:
            return self.HEADERS[section]
        return None


class DatasetsModel(_HeaderedModel):
    HEADERS = ("Name", "Samples", "Format", "Source")

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.records: list[DatasetRecord] = []

    def reload(self) -> None:
        """A handful of rows from one small table: read on the GUI thread."""
        self.beginResetModel()
        self.records = self.ctx.library.datasets.list()
        self.endResetModel()

    def record(self, row: int) -> DatasetRecord | None:
        return self.records[row] if 0 <= row < len(self.records) else None

    def row_of(self, name: str) -> int | None:
        return next((i for i, r in enumerate(self.records) if r.name == name), None)

    def rowCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.records)

    def data(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex, role: int = _ROLE.DisplayRole) -> object:
        record = self.record(index.row()) if index.isValid() else None
        if record is None:
            return None
        if role == _ROLE.DisplayRole:
            return (record.name, f"{record.sample_count:,}", record.format, record.source)[index.column()]
        if role == _ROLE.TextAlignmentRole and index.column() == 1:
            return _RIGHT
        if role == _ROLE.ToolTipRole:
            made = "generated" if (record.provenance or {}).get("kind") == "generated" else "imported"
            made_at = f"at {shown_time(record.created_at)}"
            return (f"{record.name}: {record.sample_count:,} samples ({record.format})\n"
                    f"from {record.source or '?'}, {made} {made_at}")
        return None


#: a page's row: idx, sample id, and the first 400 characters of input, completion and expected
SampleCells = tuple[int, str, str | None, str | None, str | None]


def load_sample_page(engine: Engine, dataset_id: int, start: int, stop: int) -> list[SampleCells]:
    sql = ("SELECT idx, sample_id, substr(input_text, 1, 400), substr(completion, 1, 400),"
           " substr(expected, 1, 400) FROM samples WHERE dataset_id = ? AND idx >= ? AND idx < ? ORDER BY idx")
    with engine.connect() as conn:
        rows: list[SampleCells] = conn.connection.driver_connection.execute(  # type: ignore[union-attr]
            sql, (dataset_id, start, stop)).fetchall()
        return rows


def load_sample(engine: Engine, dataset_id: int, idx: int) -> Sample | None:
    with engine.connect() as conn:
        row = conn.connection.driver_connection.execute(  # type: ignore[union-attr]
            "SELECT data FROM samples WHERE dataset_id = ? AND idx = ?", (dataset_id, idx)).fetchone()
    # validated as every stored sample is: one that does not validate is a sentence naming it
    return DatasetRepository(engine).stored_sample(dataset_id, idx, row[0]) if row else None


class SamplesModel(_HeaderedModel):
    """A dataset's samples by position; idx runs 0..n-1, so a page is one indexed range query."""

    HEADERS = ("#", "Sample", "Input", "Completion", "Expected")
    WIDTHS = (56, 110, 300, 300, 160)

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dataset_id: int | None = None
        self.count = 0
        self._rows: dict[int, tuple[str, ...]] = {}

    def set_dataset(self, record: DatasetRecord | None) -> None:
        self.beginResetModel()
        self.dataset_id = record.id if record else None
        self.count = record.sample_count if record else 0
        self._rows.clear()
        self.endResetModel()

    def materialised_rows(self) -> int:
        return len(self._rows)

    def _row(self, row: int) -> tuple[str, ...] | None:
        found = self._rows.get(row)
        if found is None and self.dataset_id is not None:
            start = row // PAGE_ROWS * PAGE_ROWS
            try:
                page = load_sample_page(self.ctx.library.engine, self.dataset_id, start, start + PAGE_ROWS)
            except SQLAlchemyError:
                return None
            for idx, sid, inp, comp, exp in page:
                self._rows[idx] = (str(idx), sid, one_line(inp or ""), one_line(comp or ""), one_line(exp or ""))
            for key in list(self._rows)[: max(0, len(self._rows) - CACHE_ROWS)]:
                del self._rows[key]
            found = self._rows.get(row)
        return found

    def rowCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.count

    def data(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex, role: int = _ROLE.DisplayRole) -> object:
        if not index.isValid():
            return None
        if role == _ROLE.TextAlignmentRole and index.column() == 0:
            return _RIGHT
        if role not in (_ROLE.DisplayRole, _ROLE.ToolTipRole):
            return None
        row = self._row(index.row())
        if row is None:
            return "…" if role == _ROLE.DisplayRole else None
        text = row[index.column()]
        return text if role == _ROLE.DisplayRole else (text if len(text) > 30 else None)
