"""The list of past runs (model/view), loaded off the GUI thread: counting a big run's results takes a while."""

from __future__ import annotations

from studio.core.engine.summary import stored_summary
from studio.core.models import RunInfo
from studio.core.outside import shown_time

from ..context import AppContext
from ..qt import QObject, Qt, QtCore, Signal
from ..results.status import status_colour

HEADERS = ("Run", "Status", "Grader", "Dataset", "Done", "Mean", "Started")
_ROLE = Qt.ItemDataRole
RunIdRole = int(_ROLE.UserRole) + 1


def resumable(info: RunInfo) -> bool:
    return info.status != "completed"


class RunsModel(QtCore.QAbstractTableModel):
    loaded = Signal()

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.runs: list[RunInfo] = []
        self._loading = False
        self._again = False

    def reload(self) -> None:
        if self._loading:
            self._again = True
            return
        self._loading = True
        library = self.ctx.library
        self.ctx.tasks.run(lambda: library.runs.list(), self._on_loaded, self._on_error)

    def _on_loaded(self, runs: list[RunInfo]) -> None:
        try:
            self._loading = False
            self.beginResetModel()
            self.runs = runs
            self.endResetModel()
            self.loaded.emit()
            if self._again:
                self._again = False
                self.reload()
        except RuntimeError:  # deleted while loading
            pass

    def _on_error(self, exc: BaseException) -> None:
        self._loading = False

    def run_at(self, row: int) -> RunInfo | None:
        return self.runs[row] if 0 <= row < len(self.runs) else None

    def row_of(self, run_id: int) -> int | None:
        return next((i for i, r in enumerate(self.runs) if r.id == run_id), None)

    def update_run(self, run_id: int, **changes: object) -> None:
        """Show a live run's progress without re-listing every run."""
        row = self.row_of(run_id)
        if row is None:
            return
        self.runs[row] = self.runs[row].model_copy(update=changes)
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(HEADERS) - 1))

    def rowCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.runs)

    def columnCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == _ROLE.DisplayRole and section < len(HEADERS):
            return HEADERS[section]
        return None

    def data(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex, role: int = _ROLE.DisplayRole) -> object:
        info = self.run_at(index.row()) if index.isValid() else None
        if info is None:
            return None
        col = index.column()
        if role == RunIdRole:
            return info.id
        if role == _ROLE.DisplayRole:
            mean = stored_summary(info).mean
            return (
                str(info.id), info.status, info.label, info.dataset,
                f"{info.done:,}/{info.total:,}", "" if mean is None else f"{mean:.3f}",
                shown_time(info.created_at),
            )[col]
        if role == _ROLE.ForegroundRole and col == 1:
            return status_colour(info.status)
        if role == _ROLE.TextAlignmentRole and col in (0, 4, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == _ROLE.ToolTipRole:
            counts = ", ".join(f"{k} {v:,}" for k, v in sorted(info.counts.items())) or "no results yet"
            return (f"Run {info.id}: {info.status}\n{info.grader_key} v{info.grader_version} on {info.dataset}\n"
                    f"{counts}\nendpoint: {info.endpoint or '(the grader’s own)'}")
        return None
