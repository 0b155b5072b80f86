"""Ctrl+F in an editor: a slim bar under the text, Enter for next, Shift+Enter for previous, Esc closes."""

from __future__ import annotations

from ..qt import Qt, QtGui, QtWidgets, tool_button


class FindBar(QtWidgets.QWidget):
    def __init__(self, editor: QtWidgets.QPlainTextEdit, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.field = QtWidgets.QLineEdit(placeholderText="Find")
        self.field.setClearButtonEnabled(True)
        self.case = QtWidgets.QCheckBox("Match case")
        self.status = QtWidgets.QLabel()
        self.status.setObjectName("hint")
        previous = tool_button("↑", "Previous match (Shift+Enter)")
        following = tool_button("↓", "Next match (Enter)")
        close = tool_button("✕", "Close (Esc)")
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        for widget in (self.field, previous, following, self.case, self.status):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addWidget(close)
        self.field.textChanged.connect(lambda _text: self.find_next(from_start=True))
        self.field.returnPressed.connect(self.find_next)
        previous.clicked.connect(lambda: self.find_next(backward=True))
        following.clicked.connect(self.find_next)
        close.clicked.connect(self.close_bar)
        QtGui.QShortcut(QtGui.QKeySequence("Shift+Return"), self.field, lambda: self.find_next(backward=True))
        QtGui.QShortcut(QtGui.QKeySequence(Qt.Key.Key_Escape), self, self.close_bar,
                        context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.hide()

    def open_bar(self) -> None:
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.field.setText(selected)
        self.show()
        self.field.setFocus()
        self.field.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.editor.setFocus()

    def find_next(self, backward: bool = False, from_start: bool = False) -> bool:
        text = self.field.text()
        if not text:
            self.status.setText("")
            return False
        flags = QtGui.QTextDocument.FindFlag(0)
        if backward:
            flags |= QtGui.QTextDocument.FindFlag.FindBackward
        if self.case.isChecked():
            flags |= QtGui.QTextDocument.FindFlag.FindCaseSensitively
        if from_start:
            cursor = self.editor.textCursor()
            cursor.setPosition(cursor.selectionStart())
            self.editor.setTextCursor(cursor)
        found = self.editor.find(text, flags)
        if not found:  # wrap around
            cursor = self.editor.textCursor()
            cursor.movePosition(QtGui.QTextCursor.MoveOperation.End if backward else QtGui.QTextCursor.MoveOperation.Start)
            self.editor.setTextCursor(cursor)
            found = self.editor.find(text, flags)
        self.status.setText("" if found else "No matches")
        return found
