"""Versions of a grader: the history list, a side-by-side diff of the YAML, "restore this version"."""

from __future__ import annotations

import difflib

from studio.core.models.files import to_yaml
from studio.core.outside import shown_time
from studio.core.store.graders import VersionRecord

from ..editor.code_editor import monospace_font
from ..qt import Qt, QtGui, QtWidgets, Signal

_COLORS = {"removed": "#fde2e1", "added": "#dcfce7", "changed": "#fef3c7"}
_DARK = {"removed": "#4c1d1d", "added": "#143d24", "changed": "#45390f"}


def side_by_side(old: str, new: str) -> list[tuple[str, str, str]]:
    """Aligned rows ``(left, right, tag)`` with tag equal/removed/added/changed."""
    a, b = old.splitlines(), new.splitlines()
    rows: list[tuple[str, str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend((a[i], b[j], "equal") for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "delete":
            rows.extend((a[i], "", "removed") for i in range(i1, i2))
        elif tag == "insert":
            rows.extend(("", b[j], "added") for j in range(j1, j2))
        else:
            left, right = a[i1:i2], b[j1:j2]
            for n in range(max(len(left), len(right))):
                rows.append((left[n] if n < len(left) else "", right[n] if n < len(right) else "", "changed"))
    return rows


class DiffView(QtWidgets.QWidget):
    """Two aligned columns, one table row per diff row: a long line wraps inside its row (issue 43:
    a conflict's one differing line was cut at the pane's edge), and the other side's row grows with
    it, so the sides stay aligned without a sideways scroll."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, dark: bool = False) -> None:
        super().__init__(parent)
        self.colors = _DARK if dark else _COLORS
        self.left_title, self.right_title = QtWidgets.QLabel(), QtWidgets.QLabel()
        for title in (self.left_title, self.right_title):
            title.setWordWrap(True)
        self.table = table = QtWidgets.QTableWidget(0, 2)
        table.setFont(monospace_font())
        table.setWordWrap(True)  # item views wrap at a word boundary, else anywhere: a long token too
        table.setTextElideMode(Qt.TextElideMode.ElideNone)
        table.horizontalHeader().hide()
        table.verticalHeader().hide()
        table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Stretch)
        table.verticalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setVerticalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerPixel)
        table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        # lines are selected one side at a time and copied as text (Ctrl+C), as from a text pane
        table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ContiguousSelection)
        QtGui.QShortcut(QtGui.QKeySequence(QtGui.QKeySequence.StandardKey.Copy), table, self.copy,
                        context=Qt.ShortcutContext.WidgetShortcut)
        table.setShowGrid(False)
        grid = QtWidgets.QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.left_title, 0, 0)
        grid.addWidget(self.right_title, 0, 1)
        grid.addWidget(table, 1, 0, 1, 2)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)

    def copy(self) -> None:
        """The selected lines to the clipboard: row by row, the two sides apart by a tab."""
        cells = sorted((i.row(), i.column()) for i in self.table.selectedIndexes())
        rows: dict[int, list[str]] = {}
        for row, column in cells:
            rows.setdefault(row, []).append(self._cell(row, column))
        QtWidgets.QApplication.clipboard().setText("\n".join("\t".join(parts) for parts in rows.values()))

    def text(self, side: int) -> str:
        """One side's lines as shown (0: left, 1: right); an added or removed row is empty there."""
        return "\n".join(self._cell(n, side) for n in range(self.table.rowCount()))

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def show_diff(self, old_title: str, old: str, new_title: str, new: str) -> int:
        """Fill both columns; returns the number of differing rows."""
        self.left_title.setText(old_title)
        self.right_title.setText(new_title)
        rows = side_by_side(old, new)
        table = self.table
        table.setUpdatesEnabled(False)
        try:
            table.setRowCount(0)
            table.setRowCount(len(rows))
            for n, (left, right, tag) in enumerate(rows):
                for side, text in ((0, left), (1, right)):
                    item = QtWidgets.QTableWidgetItem(text)  # plain text, never markup
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
                    shaded = tag != "equal" and not (tag == "added" and side == 0) \
                        and not (tag == "removed" and side == 1)
                    if shaded:
                        item.setBackground(QtGui.QBrush(QtGui.QColor(self.colors[tag])))
                    table.setItem(n, side, item)
        finally:
            table.setUpdatesEnabled(True)
        return sum(1 for r in rows if r[2] != "equal")


class VersionsDialog(QtWidgets.QDialog):
    """Pick a version on the left; the diff compares it with the current version."""

    restore_requested = Signal(int)
    compare_requested = Signal()  # "compare with previous run": the grader's newest two runs

    def __init__(self, key: str, versions: list[VersionRecord], current: int, read_only: bool,
                 parent: QtWidgets.QWidget | None = None, dark: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Versions of {key}")
        self.versions = {v.version: v for v in versions}
        self.current = current
        self.list = QtWidgets.QTreeWidget()
        self.list.setHeaderLabels(["Version", "Action", "Author", "When", "Message"])
        self.list.setRootIsDecorated(False)
        for v in reversed(versions):
            item = QtWidgets.QTreeWidgetItem([f"v{v.version}" + (" (current)" if v.version == current else ""),
                                              v.action, v.author, shown_time(v.created_at), v.message])
            item.setData(0, Qt.ItemDataRole.UserRole, v.version)
            self.list.addTopLevelItem(item)
        for col in range(4):
            self.list.resizeColumnToContents(col)
        self.diff = DiffView(dark=dark)
        self.summary = QtWidgets.QLabel()
        self.restore = QtWidgets.QPushButton("Restore this version")
        self.restore.setToolTip("Make the selected version current again, as a new version (history is kept)")
        self.restore.setEnabled(False)
        if read_only:
            self.restore.setToolTip("The grader is locked: unlock it to restore a version")
        self._read_only = read_only
        self.compare = QtWidgets.QPushButton("Compare with previous run")
        self.compare.setToolTip("Open the compare view on this grader's newest run and the run before it "
                                "on the same dataset")
        close = QtWidgets.QPushButton("Close")
        splitter = QtWidgets.QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.list)
        splitter.addWidget(self.diff)
        splitter.setSizes([160, 440])
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.compare)
        buttons.addWidget(self.restore)
        buttons.addWidget(close)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        self.list.currentItemChanged.connect(self._selected)
        self.restore.clicked.connect(self._restore)
        self.compare.clicked.connect(self.compare_requested)
        self.compare.clicked.connect(self.accept)
        close.clicked.connect(self.reject)
        self.resize(980, 640)
        if self.list.topLevelItemCount():
            first = self.list.topLevelItem(min(1, self.list.topLevelItemCount() - 1))
            if first is not None:
                self.list.setCurrentItem(first)

    def selected_version(self) -> int | None:
        item = self.list.currentItem()
        return None if item is None else int(item.data(0, Qt.ItemDataRole.UserRole))

    def _selected(self, *_: object) -> None:
        number = self.selected_version()
        if number is None:
            return
        old, new = self.versions[number], self.versions[self.current]
        changed = self.diff.show_diff(f"v{number} ({old.action})", to_yaml(old.definition),
                                      f"v{self.current} (current)", to_yaml(new.definition))
        self.summary.setText("Same as the current version." if not changed else f"{changed} line(s) differ from the current version.")
        self.restore.setEnabled(number != self.current and not self._read_only)

    def _restore(self) -> None:
        number = self.selected_version()
        if number is not None:
            self.restore_requested.emit(number)
            self.accept()

