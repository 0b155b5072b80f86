"""The results grid's column chooser: which columns show, from the Columns button or a header's menu.

A single grader's run and a suite run keep separate choices (a suite's grid shows its scores, the
sample and its status, and leaves the input and completion to the detail pane beside it); both are
remembered across runs and sessions by column key, a grader's column by its grader.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from ..qt import QtCore, QtWidgets
from .columns import COLUMNS

if TYPE_CHECKING:
    from ..context import AppContext
    from .model import ResultsModel

SINGLE_KEY = "results/hidden_columns"
SUITE_KEY = "results/suite_hidden_columns"
#: what a suite run's grid leaves to the chooser at first (ui/suites/grid.py shows the rest)
SUITE_HIDDEN = frozenset({"idx", "input", "completion", "expected", "error", "latency", "tokens", "cached"})


class ColumnHost(Protocol):
    """What the chooser needs of the results view that holds it (a protocol, so this module does
    not import the view that imports it)."""

    ctx: AppContext
    model: ResultsModel
    table: QtWidgets.QTableView
    columns: ColumnChooser


def _keys(value: object) -> set[str] | None:
    """The hidden columns as QSettings gives them back: None (never set), one string, or a list."""
    if value is None:
        return None
    if isinstance(value, str):
        return {value} if value else set()
    return {str(v) for v in value} if isinstance(value, Iterable) else None


class ColumnChooser(QtCore.QObject):
    def __init__(self, view: ColumnHost) -> None:
        super().__init__(view if isinstance(view, QtCore.QObject) else None)
        self.view = view
        settings = view.ctx.settings
        self.suite = False
        self._hidden = {False: _keys(settings.value(SINGLE_KEY)) or set(),
                        True: _keys(settings.value(SUITE_KEY))}
        if self._hidden[True] is None:
            self._hidden[True] = set(SUITE_HIDDEN)

    @property
    def hidden(self) -> set[str]:
        return self._hidden[self.suite]  # type: ignore[return-value]

    def set_mode(self, suite: bool, restore_order: bool = False) -> None:
        """A suite run's choices or a single run's; ``restore_order`` puts the columns back in place."""
        self.suite = suite
        if restore_order:
            header = self.view.table.horizontalHeader()
            for logical in range(header.count()):
                header.moveSection(header.visualIndex(logical), logical)
        self.apply()

    def apply(self) -> None:
        table = self.view.table
        for logical, column in enumerate(self.view.model.columns):
            table.setColumnHidden(logical, column.key in self.hidden)

    def set_shown(self, logical: int, shown: bool) -> None:
        key = self.view.model.columns[logical].key
        if shown:
            self.hidden.discard(key)
        else:
            self.hidden.add(key)
        self.view.table.setColumnHidden(logical, not shown)
        self.view.ctx.settings.setValue(SUITE_KEY if self.suite else SINGLE_KEY, sorted(self.hidden))


def add_chooser(menu: QtWidgets.QMenu, view: ColumnHost) -> None:
    """A checkable entry per column, in the order the grid shows them; the last shown one stays."""
    header = view.table.horizontalHeader()
    columns = view.model.columns
    shown = sum(1 for i in range(len(columns)) if not header.isSectionHidden(i))
    for visual in range(header.count()):
        logical = header.logicalIndex(visual)
        if not 0 <= logical < len(columns):
            continue
        column = columns[logical]
        name = column.key.split(":", 1)[1] if logical >= len(COLUMNS) else column.title
        action = menu.addAction(name)
        action.setCheckable(True)
        action.setChecked(not header.isSectionHidden(logical))
        action.setEnabled(header.isSectionHidden(logical) or shown > 1)
        action.toggled.connect(lambda on, i=logical: view.columns.set_shown(i, on))
