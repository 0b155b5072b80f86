"""A suite run in the results grid: one score column per grader beside the overall score, sortable,
and a per-grader pass/fail filter from the column's header menu.

The grid's model appends the grader columns after its fixed ones (so the fixed columns keep their
places for everything that reads them) and this module moves them, on screen, right after Score.
A grader's cell is its score from the sample row's ``scores`` (no extra query: the grid stays as fast
as with one score); its sort is SQLite's, its filter a ``ResultFilter.graders`` condition. "The
judge says fail but exact match passes" is two clicks: right-click the judge's header, "Fails only";
right-click exact match's, "Passes only".
"""

from __future__ import annotations

from typing import Any

from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD
from studio.core.store.results_query import GRADER_SORT, ResultRow

from ..qt import QtCore, QtWidgets
from ..results.columns import COLUMN_INDEX, COLUMNS, Column


def _cell(key: str) -> Any:
    def text(row: ResultRow) -> str:
        value = row.scores.get(key)
        return "—" if not isinstance(value, (int, float)) else f"{value:.3f}"
    return text


def _overall(row: ResultRow) -> str:
    return "—" if row.score is None else f"{row.score:.3f}"


#: a suite run's Score column: the overall score alone (each grader's has its own column)
OVERALL = Column("score", "Overall", 80, _overall, numeric=True, long_text=_overall)


def grader_columns(library: Any, run_id: int) -> tuple[tuple[Column, ...], dict[str, float]]:
    """The columns of a suite run's graders (none for a run of one grader), and each grader's
    pass threshold (the suite's, else the run's)."""
    info = library.runs.get(run_id)
    if info.suite is None:
        return (), {}
    threshold = info.pass_threshold
    columns, thresholds = [], {}
    for slot in library.runs.slots(run_id):
        key = slot.grader_key
        columns.append(Column(f"{GRADER_SORT}{key}", key, 90, _cell(key), numeric=True,
                              long_text=lambda r, k=key: f"{k}: {_cell(k)(r)}"))
        thresholds[key] = threshold if slot.threshold is None else slot.threshold
    return tuple(columns), thresholds


class SuiteGrid(QtCore.QObject):
    """Wires a ``ResultsView`` for suite runs: call ``show_run(run_id)`` after the view's ``set_run``."""

    def __init__(self, view: Any) -> None:
        super().__init__(view)
        self.view = view
        self.thresholds: dict[str, float] = {}
        header = view.table.horizontalHeader()
        header.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._menu)

    def show_run(self, run_id: int | None) -> None:
        model = self.view.model
        columns, self.thresholds = grader_columns(self.view.ctx.library, run_id) if run_id is not None else ((), {})
        if columns == model.extra_columns:
            return
        self.view.filters.grader_conditions = ()
        model.set_extra_columns(columns, {"score": OVERALL} if columns else None)
        header = self.view.table.horizontalHeader()
        after = header.visualIndex(COLUMN_INDEX["score"])
        for n, column in enumerate(columns):
            logical = len(COLUMNS) + n
            header.moveSection(header.visualIndex(logical), after + 1 + n)
            # wide enough for the key (elided beyond 150 px: the header's tooltip has it whole)
            header.resizeSection(logical, min(150, max(column.width, header.fontMetrics().horizontalAdvance(column.title) + 24)))

    def conditions(self) -> tuple[tuple[str, str, float], ...]:
        return tuple(self.view.filters.grader_conditions)

    def set_condition(self, key: str, verdict: str | None) -> None:
        """``verdict`` "pass" / "fail" keeps only the samples where grader ``key`` says so; None clears it."""
        kept = [c for c in self.conditions() if c[0] != key]
        if verdict is not None:
            kept.append((key, verdict, self.thresholds.get(key, DEFAULT_PASS_THRESHOLD)))
        self.view.filters.grader_conditions = tuple(kept)
        self.view.model.set_filter(self.view.filters.value())

    def _menu(self, pos: QtCore.QPoint) -> None:
        header = self.view.table.horizontalHeader()
        logical = header.logicalIndexAt(pos)
        columns = self.view.model.columns
        if not 0 <= logical < len(columns) or not columns[logical].key.startswith(GRADER_SORT):
            return
        key = columns[logical].key[len(GRADER_SORT):]
        threshold = self.thresholds.get(key, DEFAULT_PASS_THRESHOLD)
        menu = QtWidgets.QMenu(header)
        # pass / fail by the pass rule (a judge's own verdict first, else the score against the threshold)
        menu.addAction(f"Passes only ({key}: PASS, or ≥ {threshold:g})", lambda: self.set_condition(key, "pass"))
        menu.addAction(f"Fails only ({key}: FAIL, invalid, or < {threshold:g})", lambda: self.set_condition(key, "fail"))
        clear = menu.addAction(f"Any {key} score", lambda: self.set_condition(key, None))
        clear.setEnabled(any(c[0] == key for c in self.conditions()))
        menu.exec(header.mapToGlobal(pos))
