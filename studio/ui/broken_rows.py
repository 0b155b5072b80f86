"""Rows of the library that do not validate (a teammate's write, a hand edit), listed apart.

One widget for every list of broken rows the window shows (graders in the library panel, labels
under the label bar): each row named with its id and what is wrong, its whole sentence (author,
how to repair or delete it) as the tooltip, plain text; hidden while there is none, so a healthy
library shows nothing. An optional button acts on the selected row (the grader panel's Delete).
"""

from __future__ import annotations

from collections.abc import Callable

from studio.core.models.broken import BrokenRow
from studio.core.outside import printable

from .qt import Qt, QtWidgets


class BrokenRowsList(QtWidgets.QWidget):
    def __init__(self, title: str, action: str = "", on_action: Callable[[str], object] | None = None,
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[BrokenRow] = []
        self.title = QtWidgets.QLabel(title)
        self.list = QtWidgets.QListWidget()
        self.list.setObjectName("brokenRows")
        self.list.setMaximumHeight(90)
        self.button = QtWidgets.QPushButton(action)
        self.button.setVisible(bool(action))
        if on_action is not None:
            self.button.clicked.connect(lambda: self._act(on_action))
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        layout.addWidget(self.button)
        self.setVisible(False)

    def show_rows(self, rows: list[BrokenRow]) -> None:
        self.rows = list(rows)
        self.list.clear()
        for row in rows:
            item = QtWidgets.QListWidgetItem(f"{printable(row.ident)} — {row.reason}")
            item.setToolTip(row.sentence())
            item.setData(Qt.ItemDataRole.UserRole, row.handle)
            self.list.addItem(item)
        self.setVisible(bool(rows))
        if rows:
            self.list.setCurrentRow(0)

    def _act(self, on_action: Callable[[str], object]) -> None:
        item = self.list.currentItem()
        if item is not None:
            on_action(item.data(Qt.ItemDataRole.UserRole))
