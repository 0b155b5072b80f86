"""Small list/table editors of the judge designer: evaluation steps, subranges, criteria, shots."""

from __future__ import annotations

from collections.abc import Sequence

from ..qt import Qt, QtWidgets, Signal, tool_button

#: a table cell's value as ``TableEditor.rows`` reads it: a number for an int/float column that
#: parses, else the text (the model then names the field that is wrong)
Cell = str | int | float


class StepsEditor(QtWidgets.QWidget):
    """Evaluation steps in order: drag to reorder, double-click to edit; unchecked = generated per run."""

    changed = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.explicit = QtWidgets.QCheckBox("Write the steps myself")
        self.explicit.setToolTip("Unchecked: the judge generates the steps once per run")
        self.list = QtWidgets.QListWidget()
        self.list.setDragDropMode(QtWidgets.QAbstractItemView.DragDropMode.InternalMove)
        self.list.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.list.setMinimumHeight(110)
        self.list.setWordWrap(True)
        self.add = tool_button("Add", "Add a step")
        self.remove = tool_button("Remove")
        self.up = tool_button("↑", "Move up")
        self.down = tool_button("↓", "Move down")
        buttons = QtWidgets.QHBoxLayout()
        for b in (self.add, self.remove, self.up, self.down):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.explicit)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        self.explicit.toggled.connect(self._toggled)
        self.add.clicked.connect(self._add)
        self.remove.clicked.connect(self._remove)
        self.up.clicked.connect(lambda: self._move(-1))
        self.down.clicked.connect(lambda: self._move(1))
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        self.list.model().rowsMoved.connect(lambda *_: self.changed.emit())
        self._read_only = False

    def _toggled(self, on: bool) -> None:
        self._sync()
        self.changed.emit()

    def _sync(self) -> None:
        on = self.explicit.isChecked() and not self._read_only
        self.list.setEnabled(self.explicit.isChecked())
        for b in (self.add, self.remove, self.up, self.down):
            b.setEnabled(on)

    def _item(self, text: str) -> QtWidgets.QListWidgetItem:
        item = QtWidgets.QListWidgetItem(text)
        flags = item.flags() | Qt.ItemFlag.ItemIsDragEnabled
        if not self._read_only:
            flags |= Qt.ItemFlag.ItemIsEditable
        item.setFlags(flags & ~Qt.ItemFlag.ItemIsDropEnabled)
        return item

    def _add(self) -> None:
        item = self._item("New step")
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self.list.editItem(item)
        self.changed.emit()

    def _remove(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)
            self.changed.emit()

    def _move(self, delta: int) -> None:
        row = self.list.currentRow()
        target = row + delta
        if row < 0 or not 0 <= target < self.list.count():
            return
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)
        self.changed.emit()

    def set_steps(self, steps: list[str] | None) -> None:
        blocked = self.blockSignals(True)
        self.list.clear()
        for step in steps or []:
            self.list.addItem(self._item(step))
        self.explicit.setChecked(steps is not None)
        self._sync()
        self.blockSignals(blocked)

    def steps(self) -> list[str] | None:
        if not self.explicit.isChecked():
            return None
        return [self.list.item(i).text().strip() for i in range(self.list.count()) if self.list.item(i).text().strip()]

    def set_read_only(self, read_only: bool) -> None:
        self._read_only = read_only
        self.explicit.setEnabled(not read_only)
        self.list.setDragEnabled(not read_only)
        self.set_steps(self.steps())


class RowDialog(QtWidgets.QDialog):
    """One row of a ``TableEditor`` in a roomy editor: a text box per long text, a field per number."""

    def __init__(self, columns: list[tuple[str, str]], values: Sequence[object], title: str, read_only: bool,
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.columns = columns
        self.fields: list[QtWidgets.QWidget] = []
        form = QtWidgets.QFormLayout()
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        texts = sum(1 for _t, kind in columns if kind == "text")
        for (name, kind), value in zip(columns, values, strict=False):
            field: QtWidgets.QWidget
            if kind == "text":
                edit = QtWidgets.QPlainTextEdit("" if value is None else str(value))
                edit.setReadOnly(read_only)
                edit.setMinimumHeight(max(90, 360 // max(texts, 1)))
                edit.setTabChangesFocus(True)
                field = edit
            elif kind.startswith("choice:"):
                combo = QtWidgets.QComboBox()
                combo.addItems(kind.removeprefix("choice:").split("|"))
                combo.setCurrentText(str(value))
                combo.setEnabled(not read_only)
                field = combo
            else:
                line = QtWidgets.QLineEdit("" if value is None else str(value))
                line.setReadOnly(read_only)
                line.setMaximumWidth(160)
                field = line
            self.fields.append(field)
            form.addRow(name, field)
        buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Close if read_only
            else QtWidgets.QDialogButtonBox.StandardButton.Ok | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(buttons)
        self.resize(720, 560 if texts > 1 else 360)

    def values(self) -> list[str]:
        out: list[str] = []
        for field in self.fields:
            if isinstance(field, QtWidgets.QPlainTextEdit):
                out.append(field.toPlainText())
            elif isinstance(field, QtWidgets.QComboBox):
                out.append(field.currentText())
            else:
                out.append(field.text())  # type: ignore[attr-defined]
        return out


#: lines of text a row of a table with long texts shows before its tooltip and editor take over
ROW_LINES = 3
HEADER_PAD = 24  # a header section's margins around its title


class TableEditor(QtWidgets.QWidget):
    """Rows of plain values with Add/Remove/Edit; columns are (title, kind) with kind
    text/int/float/choice:a|b. A row's long texts show their first lines in the table (the whole text
    in the cell's tooltip); double-click or Edit… opens the row in a roomy editor."""

    changed = Signal()

    def __init__(self, columns: list[tuple[str, str]], parent: QtWidgets.QWidget | None = None,
                 defaults: Sequence[object] | None = None, noun: str = "row") -> None:
        super().__init__(parent)
        self.columns = columns
        self.noun = noun
        self.defaults: Sequence[object] = defaults or ["" for _ in columns]
        self._read_only = False
        self.dialog: RowDialog | None = None  # the row editor while it is open
        self.table = QtWidgets.QTableWidget(0, len(columns))
        self.table.setHorizontalHeaderLabels([c[0] for c in columns])
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        for i, (_title, kind) in enumerate(columns):
            mode = (QtWidgets.QHeaderView.ResizeMode.Stretch if kind == "text"
                    else QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
            header.setSectionResizeMode(i, mode)
        # a header is read whole: the table is never narrower than its titles side by side
        self.table.setMinimumWidth(sum(metrics.horizontalAdvance(t) + HEADER_PAD for t, _k in columns)
                                   + 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width())
        self.long_text = any(kind == "text" for _t, kind in columns)
        vertical = self.table.verticalHeader()
        lines = ROW_LINES if self.long_text else 1
        vertical.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(self.table.fontMetrics().lineSpacing() * lines + 10)
        self.table.setMinimumHeight(header.sizeHint().height() + vertical.defaultSectionSize() * 3 + 6)
        self.table.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding)
        self.add = tool_button("Add")
        self.edit = tool_button("Edit…")
        self.edit.setToolTip(f"Open the {noun} in a larger editor (or double-click it)")
        self.remove = tool_button("Remove")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.add)
        if self.long_text:
            buttons.addWidget(self.edit)
        else:
            self.edit.hide()
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        self.footer = QtWidgets.QLabel()
        self.footer.setWordWrap(True)
        buttons.addWidget(self.footer, 3)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.add.clicked.connect(self._add_row)
        self.remove.clicked.connect(self._remove)
        self.edit.clicked.connect(lambda: self.edit_row(self.table.currentRow()))
        self.table.itemChanged.connect(self._item_changed)
        if self.long_text:
            self.table.cellDoubleClicked.connect(lambda row, _col: self.edit_row(row))
        self.set_read_only(False)

    def _item_changed(self, item: QtWidgets.QTableWidgetItem) -> None:
        item.setToolTip(item.text())  # the whole text, where the cell shows its first lines
        self.changed.emit()

    def _add_row(self) -> None:
        self._append(self.defaults)
        row = self.table.rowCount() - 1
        self.table.selectRow(row)
        self.changed.emit()
        if self.long_text:
            self.edit_row(row, new=True)

    def row_values(self, row: int) -> list[str]:
        values: list[str] = []
        for col in range(len(self.columns)):
            widget = self.table.cellWidget(row, col)
            if isinstance(widget, QtWidgets.QComboBox):
                values.append(widget.currentText())
            else:
                item = self.table.item(row, col)
                values.append(item.text() if item is not None else "")
        return values

    def edit_row(self, row: int, new: bool = False) -> bool:
        """Open row ``row`` in a ``RowDialog``; True when it was changed."""
        if not 0 <= row < self.table.rowCount():
            return False
        title = f"{'New' if new else 'Edit'} {self.noun} {row + 1}" if not self._read_only else \
            f"{self.noun.capitalize()} {row + 1}"
        dialog = RowDialog(self.columns, self.row_values(row), title, self._read_only, self)
        self.dialog = dialog  # reachable from tests while it is open
        accepted = dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted and not self._read_only
        if accepted:
            self._set_row(row, dialog.values())
            self.changed.emit()
        self.dialog = None
        return accepted

    def _set_row(self, row: int, values: Sequence[object]) -> None:
        self.table.blockSignals(True)
        for col, value in enumerate(values):
            widget = self.table.cellWidget(row, col)
            if isinstance(widget, QtWidgets.QComboBox):
                widget.setCurrentText(str(value))
            else:
                item = QtWidgets.QTableWidgetItem("" if value is None else str(value))
                item.setToolTip(item.text())
                self.table.setItem(row, col, item)
        self.table.blockSignals(False)

    def _append(self, values: Sequence[object]) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, (_title, kind) in enumerate(self.columns):
            value = values[col] if col < len(values) else ""
            if kind.startswith("choice:"):
                combo = QtWidgets.QComboBox()
                combo.addItems(kind.removeprefix("choice:").split("|"))
                combo.setCurrentText(str(value))
                combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
                self.table.setCellWidget(row, col, combo)
            else:
                item = QtWidgets.QTableWidgetItem("" if value is None else str(value))
                item.setToolTip(item.text())
                self.table.setItem(row, col, item)

    def _remove(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()} or {self.table.currentRow()}, reverse=True)
        for row in rows:
            if row >= 0:
                self.table.removeRow(row)
        self.changed.emit()

    def set_rows(self, rows: Sequence[Sequence[object]]) -> None:
        blocked = self.blockSignals(True)
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        for values in rows:
            self._append(values)
        self.table.blockSignals(False)
        self.blockSignals(blocked)

    def rows(self) -> list[list[Cell]]:
        out = []
        for row in range(self.table.rowCount()):
            values: list[Cell] = []
            for col, (_title, kind) in enumerate(self.columns):
                widget = self.table.cellWidget(row, col)
                if isinstance(widget, QtWidgets.QComboBox):
                    values.append(widget.currentText())
                    continue
                item = self.table.item(row, col)
                text = item.text().strip() if item is not None else ""
                if kind in ("int", "float"):
                    try:
                        values.append(int(text) if kind == "int" else float(text))
                    except ValueError:
                        values.append(text)  # the model reports it with the field's name
                else:
                    values.append(text)
            out.append(values)
        return out

    def set_read_only(self, read_only: bool) -> None:
        self._read_only = read_only
        # a double-click opens the roomy editor where a row has long texts; typing edits in place
        in_place = QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed | \
            QtWidgets.QAbstractItemView.EditTrigger.AnyKeyPressed
        if not self.long_text:
            in_place |= QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers if read_only else in_place)
        self.edit.setText("View…" if read_only else "Edit…")
        self.add.setEnabled(not read_only)
        self.remove.setEnabled(not read_only)
        for row in range(self.table.rowCount()):
            for col in range(len(self.columns)):
                widget = self.table.cellWidget(row, col)
                if widget is not None:
                    widget.setEnabled(not read_only)
