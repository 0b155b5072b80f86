"""A code editor for grader sources and templates: the parts analysts miss in a plain text box.

Line numbers, current-line highlight, auto-indent, Tab = 4 spaces (Shift+Tab dedents), go to line,
and markers on the lines a validation check names (a dot in the gutter, a wavy underline, the
check's message as the line's tooltip).
"""

from __future__ import annotations

from ..qt import Qt, QtCore, QtGui, QtWidgets, Signal
from .highlighter import PygmentsHighlighter

INDENT = " " * 4


def monospace_font(size: int = 10) -> QtGui.QFont:
    font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
    font.setPointSize(size)
    return font


class _Gutter(QtWidgets.QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802
        return QtCore.QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802
        self.editor.paint_gutter(event)

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802
        cursor = self.editor.cursorForPosition(QtCore.QPoint(0, int(event.position().y())))
        self.editor.setTextCursor(cursor)
        self.editor.setFocus()


class CodeEditor(QtWidgets.QPlainTextEdit):
    """``language`` is ``python``, ``yaml``, ``handlebars`` or ``None`` (plain text)."""

    markers_changed = Signal()

    def __init__(self, language: str | None = "python", theme: str = "light",
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(monospace_font())
        self.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(QtGui.QFontMetricsF(self.font()).horizontalAdvance(" ") * 4)
        self.setCenterOnScroll(False)
        self.highlighter = PygmentsHighlighter(self.document(), language, theme) if language else None
        self._markers: dict[int, tuple[str, str]] = {}  # line (1-based) -> (severity, message)
        self._theme = theme
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self.cursorPositionChanged.connect(self._refresh_selections)
        self.textChanged.connect(self._refresh_selections)
        self._update_gutter_width()
        self._refresh_selections()

    # -- theme -------------------------------------------------------------------------------------
    def set_theme(self, theme: str) -> None:
        self._theme = theme
        if self.highlighter is not None:
            self.highlighter.set_theme(theme)
        self._refresh_selections()

    def _colors(self) -> dict[str, QtGui.QColor]:
        dark = self._theme == "dark"
        return {
            "current": QtGui.QColor("#2a2f3a" if dark else "#f2f6fc"),
            "gutter": QtGui.QColor("#1e2128" if dark else "#f5f5f5"),
            "number": QtGui.QColor("#6b7280" if dark else "#9aa0a6"),
            "number_current": QtGui.QColor("#d1d5db" if dark else "#202124"),
            "error": QtGui.QColor("#e5484d"),
            "warning": QtGui.QColor("#d97706"),
        }

    # -- gutter ------------------------------------------------------------------------------------
    def gutter_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return 18 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_gutter_width(self, _: int = 0) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _update_gutter(self, rect: QtCore.QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._gutter.setGeometry(QtCore.QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def paint_gutter(self, event: QtGui.QPaintEvent) -> None:
        colors = self._colors()
        painter = QtGui.QPainter(self._gutter)
        painter.fillRect(event.rect(), colors["gutter"])
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        current = self.textCursor().blockNumber()
        height = self.fontMetrics().height()
        width = self._gutter.width()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                marker = self._markers.get(number + 1)
                if marker is not None:
                    painter.setBrush(colors["error" if marker[0] == "error" else "warning"])
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.drawEllipse(QtCore.QRectF(3, top + height / 2 - 4, 8, 8))
                painter.setPen(colors["number_current" if number == current else "number"])
                painter.drawText(0, top, width - 6, height, Qt.AlignmentFlag.AlignRight, str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()

    # -- markers -----------------------------------------------------------------------------------
    def set_markers(self, markers: dict[int, tuple[str, str]]) -> None:
        """``{line: (severity, message)}``, severity ``error`` or ``warning``; lines are 1-based."""
        self._markers = dict(markers)
        self._refresh_selections()
        self._gutter.update()
        self.markers_changed.emit()

    def markers(self) -> dict[int, tuple[str, str]]:
        return dict(self._markers)

    def _refresh_selections(self) -> None:
        colors = self._colors()
        selections = []
        # an empty editor shows its placeholder on the first line: a highlight there would hide it
        if not self.isReadOnly() and not self.document().isEmpty():
            current = QtWidgets.QTextEdit.ExtraSelection()
            current.format.setBackground(colors["current"])
            current.format.setProperty(QtGui.QTextFormat.Property.FullWidthSelection, True)
            current.cursor = self.textCursor()
            current.cursor.clearSelection()
            selections.append(current)
        for line, (severity, _message) in self._markers.items():
            block = self.document().findBlockByNumber(line - 1)
            if not block.isValid():
                continue
            marker = QtWidgets.QTextEdit.ExtraSelection()
            marker.format.setUnderlineStyle(QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline)
            marker.format.setUnderlineColor(colors["error" if severity == "error" else "warning"])
            cursor = QtGui.QTextCursor(block)
            cursor.movePosition(QtGui.QTextCursor.MoveOperation.EndOfBlock, QtGui.QTextCursor.MoveMode.KeepAnchor)
            marker.cursor = cursor
            selections.append(marker)
        self.setExtraSelections(selections)
        self._gutter.update()

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip and self._markers:
            help_event = event  # QHelpEvent
            cursor = self.cursorForPosition(self.viewport().mapFromParent(help_event.pos()))  # type: ignore[attr-defined]
            marker = self._markers.get(cursor.blockNumber() + 1)
            if marker is not None:
                QtWidgets.QToolTip.showText(help_event.globalPos(), marker[1], self)  # type: ignore[attr-defined]
                return True
            QtWidgets.QToolTip.hideText()
        return super().event(event)

    def setReadOnly(self, read_only: bool) -> None:  # noqa: N802
        super().setReadOnly(read_only)
        self._refresh_selections()

    # -- navigation --------------------------------------------------------------------------------
    def go_to_line(self, line: int) -> None:
        block = self.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            block = self.document().lastBlock()
        cursor = QtGui.QTextCursor(block)
        self.setTextCursor(cursor)
        self.centerCursor()
        self.setFocus()

    def set_text(self, text: str) -> None:
        """Replace the text as a fresh document state (no undo back into another grader)."""
        self.setPlainText(text)
        self.document().setModified(False)

    # -- typing ------------------------------------------------------------------------------------
    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802
        if self.isReadOnly():
            super().keyPressEvent(event)
            return
        key = event.key()
        mods = event.modifiers()
        if key == Qt.Key.Key_Tab and not mods & Qt.KeyboardModifier.ControlModifier:
            if self.textCursor().hasSelection():
                self._indent_selection(dedent=False)
            else:
                self.insertPlainText(INDENT[: 4 - self.textCursor().positionInBlock() % 4] or INDENT)
            return
        if key == Qt.Key.Key_Backtab:
            self._indent_selection(dedent=True)
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & (
                Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier):
            self._newline_with_indent()
            return
        if key == Qt.Key.Key_Backspace and not self.textCursor().hasSelection():
            cursor = self.textCursor()
            before = cursor.block().text()[: cursor.positionInBlock()]
            if before and not before.strip(" ") and len(before) % 4 == 0:
                cursor.movePosition(QtGui.QTextCursor.MoveOperation.Left, QtGui.QTextCursor.MoveMode.KeepAnchor, 4)
                cursor.removeSelectedText()
                return
        super().keyPressEvent(event)

    def _newline_with_indent(self) -> None:
        cursor = self.textCursor()
        line = cursor.block().text()[: cursor.positionInBlock()]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        stripped = line.rstrip()
        if stripped.endswith((":", "(", "[", "{")):
            indent += INDENT
        cursor.beginEditBlock()
        cursor.insertText("\n" + indent)
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def _indent_selection(self, dedent: bool) -> None:
        cursor = self.textCursor()
        doc = self.document()
        start = doc.findBlock(cursor.selectionStart())
        end = doc.findBlock(max(cursor.selectionStart(), cursor.selectionEnd() - (1 if cursor.hasSelection() else 0)))
        edit = QtGui.QTextCursor(doc)
        edit.beginEditBlock()
        block = start
        while block.isValid():
            edit.setPosition(block.position())
            if dedent:
                text = block.text()
                count = len(text) - len(text.lstrip(" "))
                count = min(count, 4)
                if count:
                    edit.movePosition(QtGui.QTextCursor.MoveOperation.Right, QtGui.QTextCursor.MoveMode.KeepAnchor, count)
                    edit.removeSelectedText()
            else:
                edit.insertText(INDENT)
            if block == end:
                break
            block = block.next()
        edit.endEditBlock()
