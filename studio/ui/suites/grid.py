"""A suite run in the results grid, read like a table: the overall score first, then one compact
column per grader, each cell a pass/fail mark and the score ("✓ 0.83", tinted by the verdict), the
grader's whole name and threshold in the header's tooltip, so 4–10 graders' scores sit side by side
without scrolling sideways at 1280 px (issue 35). Sortable, and a per-grader pass/fail filter from
the column's header menu, where the column chooser (ui/results/column_chooser.py) is too.

The grid's model appends the grader columns after its fixed ones (so the fixed columns keep their
places for everything that reads them) and this module moves them, on screen, to the front. A
grader's cell is its score from the sample row's ``scores`` (no extra query: the grid stays as fast
as with one score); its sort is SQLite's, its filter a ``ResultFilter.graders`` condition. "The
judge says fail but exact match passes" is two clicks: right-click the judge's header, "Fails only";
right-click exact match's, "Passes only".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD, decide
from studio.core.store.results_query import GRADER_SORT, ResultRow

from ..qt import QtCore, QtWidgets
from ..results.column_chooser import ColumnHost, add_chooser
from ..results.columns import COLUMN_INDEX, COLUMNS, Column

if TYPE_CHECKING:
    from studio.core.store.library import Library

    from ..results.filters import FilterBar

PASS, FAIL = "✓", "✗"
#: the fixed columns a suite run's grid shows after its scores; the others wait in the column chooser
#: (the input and completion are read in the detail pane beside the grid)
SUITE_SHOWN = ("sample_id", "status", "label")


def _value(row: ResultRow, key: str | None) -> float | None:
    value = row.score if key is None else row.scores.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def verdict_of(key: str | None, threshold: float) -> Callable[[ResultRow], str | None]:
    """"pass" / "fail" of grader ``key``'s score (the overall score for None) against ``threshold``."""
    def verdict(row: ResultRow) -> str | None:
        value = _value(row, key)
        return None if value is None else decide("ok", value, None, threshold)  # the one pass rule
    return verdict


def cell_text(key: str | None, threshold: float, digits: int = 2) -> Callable[[ResultRow], str]:
    """A compact score cell: the pass/fail mark and the score ("✓ 0.83"), "—" when there is none."""
    verdict = verdict_of(key, threshold)

    def text(row: ResultRow) -> str:
        value = _value(row, key)
        if value is None:
            return "—"
        return f"{PASS if verdict(row) == 'pass' else FAIL} {value:.{digits}f}"
    return text


def long_text(key: str | None, threshold: float) -> Callable[[ResultRow], str]:
    name = key or "overall"

    def text(row: ResultRow) -> str:
        value = _value(row, key)
        if value is None:
            return f"{name}: no score"
        verdict = decide("ok", value, None, threshold)
        return f"{name}: {value:.3f} ({verdict}: the threshold is {threshold:g})"
    return text


def short_titles(keys: list[str]) -> list[str]:
    """The grader keys less the prefix they all share up to a dash ("qa-"): the header elides the rest
    in the middle, the tooltip has the key whole."""
    if len(keys) < 2:
        return list(keys)
    prefix = os.path.commonprefix(keys)
    cut = max(prefix.rfind("-"), prefix.rfind("_")) + 1
    if cut <= 0 or any(len(k) == cut for k in keys):
        return list(keys)
    return [k[cut:] for k in keys]


def overall_column(threshold: float) -> Column:
    """A suite run's Score column: the overall score alone (each grader's has its own column)."""
    return Column("score", "Overall", 72, cell_text(None, threshold, 3), numeric=True,
                  long_text=long_text(None, threshold), verdict=verdict_of(None, threshold),
                  tip=f"The suite's overall score; a pass at {threshold:g} or more")


def grader_columns(library: Library, run_id: int) -> tuple[tuple[Column, ...], dict[str, float]]:
    """The columns of a suite run's graders (none for a run of one grader), and each grader's
    pass threshold (the suite's, else the run's)."""
    info = library.runs.get(run_id)
    if info.suite is None:
        return (), {}
    threshold = info.pass_threshold
    slots = list(library.runs.slots(run_id))
    titles = short_titles([slot.grader_key for slot in slots])
    columns, thresholds = [], {}
    for slot, title in zip(slots, titles, strict=True):
        key = slot.grader_key
        mine = threshold if slot.threshold is None else slot.threshold
        tip = f"{key}: {PASS} a pass at {mine:g} or more, {FAIL} a fail. Right-click: passes or fails only"
        columns.append(Column(f"{GRADER_SORT}{key}", title, 60, cell_text(key, mine), numeric=True,
                              long_text=long_text(key, mine), tip=tip, verdict=verdict_of(key, mine)))
        thresholds[key] = mine
    return tuple(columns), thresholds


class GridHost(ColumnHost, Protocol):
    """What the suite grid needs of the results view it wires (a protocol: the view imports this)."""

    filters: FilterBar

    def fit_grid_to(self, width: int) -> None: ...

    def detail_min(self) -> int: ...

    def width(self) -> int: ...


class SuiteGrid(QtCore.QObject):
    """Wires a ``ResultsView`` for suite runs: call ``show_run(run_id)`` after the view's ``set_run``."""

    def __init__(self, view: GridHost) -> None:
        super().__init__(view if isinstance(view, QtCore.QObject) else None)
        self.view = view
        self.thresholds: dict[str, float] = {}
        header = view.table.horizontalHeader()
        header.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._menu)

    def show_run(self, run_id: int | None) -> None:
        model = self.view.model
        columns, self.thresholds = grader_columns(self.view.ctx.library, run_id) if run_id is not None else ((), {})
        overall: dict[str, Column] | None = None
        if columns and run_id is not None:  # columns come only with a run
            overall = {"score": overall_column(self.view.ctx.library.runs.get(run_id).pass_threshold)}
        if columns == model.extra_columns and (overall or {}).keys() == model.replaced.keys():
            return
        self.view.filters.grader_conditions = ()
        was_suite = bool(model.extra_columns)
        model.set_extra_columns(columns, overall)
        header = self.view.table.horizontalHeader()
        chooser = self.view.columns
        if not columns:
            chooser.set_mode(suite=False, restore_order=was_suite)
            self.view.fit_grid_to(0)
            return
        # the overall score first, each grader's next, then what a sample is
        order = [COLUMN_INDEX["score"], *range(len(COLUMNS), len(COLUMNS) + len(columns))]
        order += [COLUMN_INDEX[key] for key in SUITE_SHOWN]
        for place, logical in enumerate(order):
            header.moveSection(header.visualIndex(logical), place)
        chooser.set_mode(suite=True)
        self.relayout()

    def relayout(self) -> None:
        """Size the score columns to the view's width now (a suite run shown, the runs list opened)."""
        columns = self.view.model.extra_columns
        if not columns:
            return
        header = self.view.table.horizontalHeader()
        overall_width = self.view.table.fontMetrics().horizontalAdvance(f"{PASS} 0.000") + 18
        header.resizeSection(COLUMN_INDEX["score"], overall_width)
        for n, width in enumerate(self._widths(columns, overall_width)):
            header.resizeSection(len(COLUMNS) + n, width)
        self.view.fit_grid_to(self.scores_width())

    def _widths(self, columns: tuple[Column, ...], overall_width: int) -> list[int]:
        """Each grader column as narrow as its cells ("✓ 0.00"), wider for its title where the room the
        grid can have (the view less the detail pane's least) allows: all of them stay in view."""
        header = self.view.table.horizontalHeader()
        cell = self.view.table.fontMetrics().horizontalAdvance(f"{PASS} 0.00") + 18
        titles = [min(header.fontMetrics().horizontalAdvance(c.title) + 22, 3 * cell) for c in columns]
        room = self.view.width() - self.view.detail_min() - overall_width
        room -= sum(header.sectionSize(COLUMN_INDEX[key]) for key in ("sample_id", "status")) + 24
        extra = [max(0, t - cell) for t in titles]
        spare = room - cell * len(columns)
        if spare <= 0 or not any(extra):
            return [cell] * len(columns)
        share = min(1.0, spare / sum(extra))
        return [cell + int(e * share) for e in extra]

    def scores_width(self) -> int:
        """The width of the overall and grader columns, with the sample and status beside them."""
        header = self.view.table.horizontalHeader()
        shown = [COLUMN_INDEX["score"], *range(len(COLUMNS), len(self.view.model.columns)),
                 COLUMN_INDEX["sample_id"], COLUMN_INDEX["status"]]
        return sum(header.sectionSize(i) for i in shown if not header.isSectionHidden(i))

    def conditions(self) -> tuple[tuple[str, str, float], ...]:
        return tuple(self.view.filters.grader_conditions)

    def set_condition(self, key: str, verdict: str | None) -> None:
        """``verdict`` "pass" / "fail" keeps only the samples where grader ``key`` says so; None clears it."""
        kept = [c for c in self.conditions() if c[0] != key]
        if verdict is not None:
            kept.append((key, verdict, self.thresholds.get(key, DEFAULT_PASS_THRESHOLD)))
        self.view.filters.grader_conditions = tuple(kept)
        self.view.model.set_filter(self.view.filters.value())

    def menu_for(self, logical: int, parent: QtWidgets.QWidget) -> QtWidgets.QMenu:
        """A header's menu: a grader column's pass/fail filters, then the column chooser."""
        columns = self.view.model.columns
        menu = QtWidgets.QMenu(parent)
        if 0 <= logical < len(columns) and columns[logical].key.startswith(GRADER_SORT):
            key = columns[logical].key[len(GRADER_SORT):]
            threshold = self.thresholds.get(key, DEFAULT_PASS_THRESHOLD)
            # pass / fail by the pass rule (a judge's own verdict first, else the score against the threshold)
            menu.addAction(f"Passes only ({key}: PASS, or ≥ {threshold:g})", lambda: self.set_condition(key, "pass"))
            menu.addAction(f"Fails only ({key}: FAIL, invalid, or < {threshold:g})",
                           lambda: self.set_condition(key, "fail"))
            clear = menu.addAction(f"Any {key} score", lambda: self.set_condition(key, None))
            clear.setEnabled(any(c[0] == key for c in self.conditions()))
            menu.addSeparator()
        add_chooser(menu.addMenu("Columns"), self.view)
        return menu

    def _menu(self, pos: QtCore.QPoint) -> None:
        header = self.view.table.horizontalHeader()
        menu = self.menu_for(header.logicalIndexAt(pos), header)
        menu.exec(header.mapToGlobal(pos))

