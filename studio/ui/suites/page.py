"""``SuitesPage``: the library's suites, and the editor of one (graders in order, weights, thresholds,
the overall rule), with lock, trash and restore as for graders.

A suite is made from graders picked in a checklist of the library ("New suite…", or "Add graders…"
to an open one); rows move up and down; every save is a new version, checked by the library first
(a refusal is its one sentence under the table, and nothing is stored). Texts are plain text.
"""

from __future__ import annotations

import math
import re

from studio.core.errors import StudioError
from studio.core.models.common import SLUG_PATTERN
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store.suites import SuiteRecord

from ..context import AppContext
from ..messages import describe_error
from ..qt import Qt, QtWidgets, Signal

RULES = (("No overall score", "none"), ("Weighted mean", "mean"), ("All must pass", "all-pass"),
         ("A composite grader's rule", "composite"))
COLUMNS = ("Grader", "Version", "Weight", "Pass threshold")


class GraderChecklist(QtWidgets.QDialog):
    """Pick several graders of the library (the run page and the suite editor share it)."""

    def __init__(self, ctx: AppContext, title: str, exclude: set[str] | None = None,
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.list = QtWidgets.QListWidget()
        for record in ctx.library.graders.list():
            if exclude and record.key in exclude:
                continue
            item = QtWidgets.QListWidgetItem(f"{record.key}  ({record.kind})")
            item.setData(Qt.ItemDataRole.UserRole, record.key)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(QtWidgets.QLabel("Tick the graders, in the order they should run:"))
        layout.addWidget(self.list)
        layout.addWidget(buttons)
        self.resize(420, 460)

    def chosen(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.CheckState.Checked]

    def check(self, keys: list[str]) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) in keys:
                item.setCheckState(Qt.CheckState.Checked)


class SuitesPage(QtWidgets.QWidget):
    #: a suite to run on the run page (its key)
    run_requested = Signal(str)
    #: a suite was created, saved, locked, trashed or restored (the run page refills its picker)
    suites_changed = Signal()

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.record: SuiteRecord | None = None
        self.suites = QtWidgets.QListWidget()
        self.show_trash = QtWidgets.QCheckBox("Show the trash")
        self.new_button = QtWidgets.QPushButton("New suite…")
        self.new_button.setToolTip("A suite of graders picked from the library")

        self.key = QtWidgets.QLineEdit()
        self.key.setPlaceholderText("suite key (a-z, 0-9, . _ -)")
        self.name = QtWidgets.QLineEdit()
        self.name.setPlaceholderText("a name people read (optional)")
        self.rule = QtWidgets.QComboBox()
        for label, value in RULES:
            self.rule.addItem(label, value)
        self.composite = QtWidgets.QComboBox()
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setColumnWidth(0, 260)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.add_button = QtWidgets.QPushButton("Add graders…")
        self.up_button = QtWidgets.QPushButton("Up")
        self.down_button = QtWidgets.QPushButton("Down")
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.save_button = QtWidgets.QPushButton("Save version")
        self.lock_button = QtWidgets.QPushButton("Lock")
        self.trash_button = QtWidgets.QPushButton("Move to trash")
        self.run_button = QtWidgets.QPushButton("Run…")
        self.message = QtWidgets.QLabel()
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        self.banner = QtWidgets.QLabel()
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self._layout()

        self.suites.currentItemChanged.connect(lambda item, _prev: self._open_item(item))
        self.show_trash.toggled.connect(lambda _on: self.reload())
        self.new_button.clicked.connect(self.new_suite)
        self.add_button.clicked.connect(self.add_graders)
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button.clicked.connect(lambda: self._move(1))
        self.remove_button.clicked.connect(self._remove_row)
        self.save_button.clicked.connect(self.save)
        self.lock_button.clicked.connect(self._toggle_lock)
        self.trash_button.clicked.connect(self._trash_or_restore)
        self.run_button.clicked.connect(lambda: self.record and self.run_requested.emit(self.record.key))
        self.rule.currentIndexChanged.connect(lambda _i: self.composite.setEnabled(self.rule.currentData() == "composite"))
        ctx.graders_changed.connect(self._reload_composites)
        self.reload()
        self._show(None)

    def _layout(self) -> None:
        left = QtWidgets.QVBoxLayout()
        left.addWidget(QtWidgets.QLabel("Suites"))
        left.addWidget(self.suites, 1)
        left.addWidget(self.show_trash)
        left.addWidget(self.new_button)
        form = QtWidgets.QFormLayout()
        form.addRow("&Key", self.key)
        form.addRow("&Name", self.name)
        overall = QtWidgets.QHBoxLayout()
        overall.addWidget(self.rule)
        overall.addWidget(self.composite, 1)
        form.addRow("Overall score", overall)
        rows = QtWidgets.QHBoxLayout()
        for button in (self.add_button, self.up_button, self.down_button, self.remove_button):
            rows.addWidget(button)
        rows.addStretch(1)
        actions = QtWidgets.QHBoxLayout()
        for button in (self.save_button, self.lock_button, self.trash_button, self.run_button):
            actions.addWidget(button)
        actions.addStretch(1)
        right = QtWidgets.QVBoxLayout()
        right.addWidget(self.banner)
        right.addLayout(form)
        right.addWidget(self.table, 1)
        right.addLayout(rows)
        right.addWidget(self.message)
        right.addLayout(actions)
        outer = QtWidgets.QHBoxLayout(self)
        left_box = QtWidgets.QWidget()
        left_box.setLayout(left)
        left_box.setMaximumWidth(260)
        outer.addWidget(left_box)
        outer.addLayout(right, 1)

    # -- the list ------------------------------------------------------------------------------------
    def reload(self, select: str | None = None, *, reopen: bool = True) -> None:
        """Rebuild the list keeping the selection; ``reopen=False`` (the live view: another analyst
        changed a suite) leaves the open suite's editor, and its unsaved edits, as they are."""
        keep = select or (self.record.key if self.record else None)
        self.suites.blockSignals(True)
        self.suites.clear()
        records = self.ctx.library.suites.list(include_deleted=self.show_trash.isChecked())
        for record in records:
            label = record.key + ("  (trash)" if record.deleted else "") + ("  🔒" if record.locked else "")
            item = QtWidgets.QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, record.key)
            self.suites.addItem(item)
            if record.key == keep:
                self.suites.setCurrentItem(item)
        self.suites.blockSignals(False)
        self._reload_composites()
        if reopen and keep and any(r.key == keep for r in records):
            self._open(keep)

    def _reload_composites(self) -> None:
        chosen = self.composite.currentData()
        self.composite.clear()
        for record in self.ctx.library.graders.list():
            if record.kind == "composite":
                self.composite.addItem(record.key, record.key)
        index = self.composite.findData(chosen)
        if index >= 0:
            self.composite.setCurrentIndex(index)

    def _open_item(self, item: QtWidgets.QListWidgetItem | None) -> None:
        if item is not None:
            self._open(item.data(Qt.ItemDataRole.UserRole))

    def _open(self, key: str) -> None:
        try:
            self._show(self.ctx.library.suites.get(key, include_deleted=True))
        except Exception as exc:
            self._say(describe_error(exc), error=True)

    # -- the editor ----------------------------------------------------------------------------------
    def _show(self, record: SuiteRecord | None, definition: SuiteDefinition | None = None) -> None:
        self.record = record
        definition = definition or (record.definition if record else None)
        self.key.setText(definition.key if definition else "")
        self.key.setReadOnly(record is not None)
        self.name.setText(definition.name if definition else "")
        index = self.rule.findData(definition.overall if definition else "none")
        self.rule.setCurrentIndex(max(0, index))
        self.composite.setEnabled(self.rule.currentData() == "composite")
        if definition and definition.overall_grader:
            self.composite.setCurrentIndex(max(0, self.composite.findData(definition.overall_grader)))
        self.table.setRowCount(0)
        for member in definition.graders if definition else []:
            self._append(member)
        readonly = record is not None and (record.locked or record.deleted)
        for widget in (self.name, self.rule, self.composite, self.table, self.add_button, self.up_button,
                       self.down_button, self.remove_button, self.save_button):
            widget.setEnabled(not readonly and (definition is not None))
        self.composite.setEnabled(not readonly and self.rule.currentData() == "composite")
        self.lock_button.setEnabled(record is not None and not record.deleted)
        self.lock_button.setText("Unlock" if record and record.locked else "Lock")
        self.trash_button.setEnabled(record is not None and not (record.locked and not record.deleted))
        self.trash_button.setText("Restore" if record and record.deleted else "Move to trash")
        self.run_button.setEnabled(record is not None and not record.deleted)
        if record is None:
            self.banner.setText("" if definition else "Pick a suite, or make one from graders with New suite…")
        elif record.deleted:
            self.banner.setText(f"Suite {record.key} is in the trash: restore it to edit or run it.")
        elif record.locked:
            self.banner.setText(f"Suite {record.key} v{record.current_version} is locked: unlock it to edit.")
        else:
            self.banner.setText(f"Suite {record.key} v{record.current_version}")
        self.message.clear()

    def _append(self, member: SuiteMember) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        name = QtWidgets.QTableWidgetItem(member.grader)
        name.setFlags(name.flags() & ~Qt.ItemFlag.ItemIsEditable)
        self.table.setItem(row, 0, name)
        self.table.setItem(row, 1, QtWidgets.QTableWidgetItem("" if member.version is None else str(member.version)))
        self.table.setItem(row, 2, QtWidgets.QTableWidgetItem(f"{member.weight:g}"))
        self.table.setItem(row, 3, QtWidgets.QTableWidgetItem("" if member.threshold is None else f"{member.threshold:g}"))
        self._item(row, 1).setToolTip("empty: follow the grader's current version")
        self._item(row, 3).setToolTip("empty: the run's pass threshold")

    def _item(self, row: int, column: int) -> QtWidgets.QTableWidgetItem:
        """A cell of the members' table (``_append`` sets every cell of a row it adds)."""
        item = self.table.item(row, column)
        if item is None:
            item = QtWidgets.QTableWidgetItem()
            self.table.setItem(row, column, item)
        return item

    def new_suite(self) -> None:
        dialog = GraderChecklist(self.ctx, "New suite from graders", parent=self)
        if dialog.exec() != QtWidgets.QDialog.DialogCode.Accepted or not dialog.chosen():
            return
        self.suites.clearSelection()
        self._show(None, SuiteDefinition.model_construct(key="", name="", graders=[
            SuiteMember(grader=k) for k in dialog.chosen()], overall="mean", overall_grader=None))
        self.key.setFocus()

    def new_from(self, keys: list[str]) -> None:
        """A new suite of ``keys`` (the library's selected graders), waiting for its key."""
        self._show(None, SuiteDefinition.model_construct(key="", name="", graders=[SuiteMember(grader=k) for k in keys],
                                                         overall="mean", overall_grader=None))

    def add_graders(self) -> None:
        have = {self._item(r, 0).text() for r in range(self.table.rowCount())}
        dialog = GraderChecklist(self.ctx, "Add graders to the suite", exclude=have, parent=self)
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            for key in dialog.chosen():
                self._append(SuiteMember(grader=key))

    def _move(self, step: int) -> None:
        row = self.table.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.table.rowCount():
            return
        values = [[self._item(r, c).text() for c in range(len(COLUMNS))] for r in (row, target)]
        for r, cells in zip((target, row), values, strict=True):
            for c, text in enumerate(cells):
                self._item(r, c).setText(text)
        self.table.setCurrentCell(target, 0)

    def _remove_row(self) -> None:
        row = self.table.currentRow()
        if row >= 0:
            self.table.removeRow(row)

    def definition(self) -> SuiteDefinition:
        """The suite the editor shows; a ``StudioError`` (one sentence) for a cell that is not a number."""
        key = self.key.text().strip()
        if not re.match(SLUG_PATTERN, key):
            raise StudioError("the suite key must be lower-case letters, digits, '.', '_' or '-'")
        members = []
        for row in range(self.table.rowCount()):
            grader = self._item(row, 0).text()
            version = self._number(row, 1, grader, "version", integer=True)
            weight = self._number(row, 2, grader, "weight")
            threshold = self._number(row, 3, grader, "pass threshold")
            members.append(SuiteMember(grader=grader, version=None if version is None else int(version),
                                       weight=1.0 if weight is None else weight, threshold=threshold))
        if not members:
            raise StudioError("a suite needs at least one grader")
        rule = self.rule.currentData()
        return SuiteDefinition(key=key, name=self.name.text().strip(), graders=members, overall=rule,
                               overall_grader=self.composite.currentData() if rule == "composite" else None)

    def _number(self, row: int, column: int, grader: str, what: str, integer: bool = False) -> float | None:
        text = self._item(row, column).text().strip()
        if not text:
            return None
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise StudioError(f"the {what} of {grader!r} is not a {'whole ' if integer else ''}number: {text!r}") from None
        if not math.isfinite(value):
            raise StudioError(f"the {what} of {grader!r} must be a finite number")
        return value

    def save(self) -> bool:
        try:
            definition = self.definition()
            suites = self.ctx.library.suites
            # from the version shown: another analyst's newer save is refused, naming it (docs/team.md)
            record = (suites.save(definition, base_version=self.record.current_version) if self.record is not None
                      else suites.create(definition))
        except Exception as exc:
            self._say(describe_error(exc), error=True)
            return False
        self.reload(select=record.key)
        self.suites_changed.emit()
        self._say(f"Saved suite {record.key} v{record.current_version}.")
        return True

    def _toggle_lock(self) -> None:
        if self.record is None:
            return
        try:
            self.ctx.library.suites.set_locked(self.record.key, not self.record.locked)
        except Exception as exc:
            self._say(describe_error(exc), error=True)
            return
        self.reload(select=self.record.key)
        self.suites_changed.emit()

    def _trash_or_restore(self) -> None:
        if self.record is None:
            return
        key = self.record.key
        try:
            if self.record.deleted:
                self.ctx.library.suites.restore(key)
            else:
                self.ctx.library.suites.delete(key)
                self.show_trash.setChecked(True)
        except Exception as exc:
            self._say(describe_error(exc), error=True)
            return
        self.reload(select=key)
        self.suites_changed.emit()

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setProperty("error", error)
        self.message.setStyleSheet("color: #b00020;" if error else "")
