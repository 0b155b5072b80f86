"""Small list/table editors of the judge designer: evaluation steps, subranges, criteria, shots."""

from __future__ import annotations

from typing import Any

from ..qt import Qt, QtWidgets, Signal


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
        self.add = QtWidgets.QToolButton(text="Add", toolTip="Add a step")
        self.remove = QtWidgets.QToolButton(text="Remove")
        self.up = QtWidgets.QToolButton(text="↑", toolTip="Move up")
        self.down = QtWidgets.QToolButton(text="↓", toolTip="Move down")
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


class TableEditor(QtWidgets.QWidget):
    """Rows of plain values with Add/Remove; columns are (title, kind) with kind text/int/float/choice:a|b."""

    changed = Signal()

    def __init__(self, columns: list[tuple[str, str]], parent: QtWidgets.QWidget | None = None,
                 defaults: list[Any] | None = None) -> None:
        super().__init__(parent)
        self.columns = columns
        self.defaults = defaults or ["" for _ in columns]
        self.table = QtWidgets.QTableWidget(0, len(columns))
        self.table.setHorizontalHeaderLabels([c[0] for c in columns])
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        for i, (_title, kind) in enumerate(columns):
            mode = (QtWidgets.QHeaderView.ResizeMode.Stretch if kind == "text"
                    else QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
            header.setSectionResizeMode(i, mode)
        self.table.setMinimumHeight(96)
        self.add = QtWidgets.QToolButton(text="Add")
        self.remove = QtWidgets.QToolButton(text="Remove")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        self.footer = QtWidgets.QLabel()
        self.footer.setWordWrap(True)
        buttons.addWidget(self.footer, 3)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.add.clicked.connect(lambda: (self._append(self.defaults), self.changed.emit()))
        self.remove.clicked.connect(self._remove)
        self.table.itemChanged.connect(lambda _item: self.changed.emit())

    def _append(self, values: list[Any]) -> None:
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
                self.table.setItem(row, col, QtWidgets.QTableWidgetItem("" if value is None else str(value)))

    def _remove(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()} or {self.table.currentRow()}, reverse=True)
        for row in rows:
            if row >= 0:
                self.table.removeRow(row)
        self.changed.emit()

    def set_rows(self, rows: list[list[Any]]) -> None:
        blocked = self.blockSignals(True)
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        for values in rows:
            self._append(values)
        self.table.resizeRowsToContents()
        self.table.blockSignals(False)
        self.blockSignals(blocked)

    def rows(self) -> list[list[Any]]:
        out = []
        for row in range(self.table.rowCount()):
            values: list[Any] = []
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
        triggers = (QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers if read_only
                    else QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked
                    | QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed
                    | QtWidgets.QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.table.setEditTriggers(triggers)
        self.add.setEnabled(not read_only)
        self.remove.setEnabled(not read_only)
        for row in range(self.table.rowCount()):
            for col in range(len(self.columns)):
                widget = self.table.cellWidget(row, col)
                if widget is not None:
                    widget.setEnabled(not read_only)
