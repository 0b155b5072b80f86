"""The Validate results: one row per check with its status; double-click jumps to the named line."""

from __future__ import annotations

from studio.core.checks import NOT_RUN, Check

from ..qt import Qt, QtGui, QtWidgets, Signal

STATUS = {
    "passed": ("✓", "#16a34a"),
    "failed": ("✗", "#dc2626"),
    "warning": ("!", "#d97706"),
    "skipped": ("–", "#6b7280"),
}


class ChecksPanel(QtWidgets.QWidget):
    line_activated = Signal(int)
    validate_requested = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.button = QtWidgets.QPushButton("Validate")
        self.button.setToolTip("Run the checks on the text as it is now (Ctrl+Enter)")
        self.summary = QtWidgets.QLabel("Not validated yet. Press Validate (Ctrl+Enter).")
        self.summary.setObjectName("hint")
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setHeaderLabels(["", "Check", "Line", "Result"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.button)
        top.addWidget(self.summary, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        self.button.clicked.connect(lambda: self.validate_requested.emit())
        self.tree.itemActivated.connect(self._activated)
        self.checks: list[Check] = []
        #: the rows are for a text edited since they ran (shown greyed, the summary says so)
        self.stale = False

    def set_running(self) -> None:
        self.button.setEnabled(False)
        self.summary.setText("Validating…")

    def set_error(self, text: str) -> None:
        self.button.setEnabled(True)
        self._set_stale(False)
        self.checks = []
        self.tree.clear()
        self.summary.setText(text)

    def mark_stale(self) -> None:
        """The text changed since these checks ran: grey them and say so (the editor checks again
        after a pause in typing); never a green tick for code that is no longer there."""
        if self.stale or not self.checks:
            return
        self._set_stale(True)
        self.summary.setText("Out of date: the text changed since these checks ran. Checking again…")

    def _set_stale(self, stale: bool) -> None:
        self.stale = stale
        self.tree.setEnabled(not stale)  # greyed rows: still readable, clearly not current

    def show_checks(self, checks: list[Check]) -> None:
        self.button.setEnabled(True)
        self._set_stale(False)
        self.checks = list(checks)
        self.tree.clear()
        for check in checks:
            mark, color = STATUS.get(check.status, ("?", "#6b7280"))
            item = QtWidgets.QTreeWidgetItem([mark, check.name, "" if check.line is None else str(check.line),
                                              check.message or check.status])
            item.setForeground(0, QtGui.QBrush(QtGui.QColor(color)))
            font = item.font(0)
            font.setBold(True)
            item.setFont(0, font)
            item.setToolTip(3, check.message)
            item.setData(0, Qt.ItemDataRole.UserRole, check.line)
            self.tree.addTopLevelItem(item)
        failed = sum(c.status == "failed" for c in checks)
        warnings = sum(c.status == "warning" for c in checks)
        passed = sum(c.status == "passed" for c in checks)
        not_run = sum(c.status == "skipped" and c.message == NOT_RUN for c in checks)
        rest = f" {not_run} not run yet: Validate runs them in the sandbox." if not_run else ""
        if failed:
            self.summary.setText(f"{failed} check(s) failed, {warnings} warning(s), {passed} passed.")
        elif warnings:
            self.summary.setText(f"Valid, with {warnings} warning(s); {passed} passed.{rest}")
        else:
            self.summary.setText(f"{passed} passed.{rest}" if rest else f"All {passed} checks passed.")

    def _activated(self, item: QtWidgets.QTreeWidgetItem, _column: int) -> None:
        line = item.data(0, Qt.ItemDataRole.UserRole)
        if line:
            self.line_activated.emit(int(line))
