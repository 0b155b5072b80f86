"""A one-line label that ends in "…" when it has not the room, and then offers the whole text as its
tooltip: a long grader name neither widens the window nor is cut without a word (issue 24). A combo
box that does the same in the middle of its text (issue 35): a grader's name and its kind in
brackets both stay in view, "qa-corre…(binary judge)", and the tooltip has it whole."""

from __future__ import annotations

from .qt import Qt, QtCore, QtGui, QtWidgets

#: the widest an elided label asks to be (px): a pasted essay as a name must not widen the window
MAX_HINT = 2000


class ElidedLabel(QtWidgets.QLabel):
    """Plain text only; ``full_text()`` is what was set, ``text()`` what is shown."""

    def __init__(self, text: str = "", parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)
        self._full = ""
        self._tip = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802
        self._full = text
        self._elide()

    def full_text(self) -> str:
        return self._full

    def set_tip(self, tip: str) -> None:
        """A tooltip of the label's own, shown whether or not the text is cut."""
        self._tip = tip
        self._elide()

    def is_elided(self) -> bool:
        return super().text() != self._full

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802
        hint = super().sizeHint()
        return QtCore.QSize(min(self.fontMetrics().horizontalAdvance(self._line()), MAX_HINT) + 4, hint.height())

    def _line(self) -> str:
        """The text as one line: an elided label never grows taller for a name holding newlines."""
        return " ".join(self._full.splitlines()) if "\n" in self._full or "\r" in self._full else self._full

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802
        return QtCore.QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event: QtCore.QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.StyleChange):
            self._elide()

    def _elide(self) -> None:
        room = self.contentsRect().width() - 2
        line = self._line()
        shown = self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, room if room > 0 else MAX_HINT)
        super().setText(shown)
        tips = [t for t in (self._full if shown != self._full else "", self._tip) if t]
        self.setToolTip("\n".join(tips))


class ElidedCombo(QtWidgets.QComboBox):
    """A combo box that asks for ``chars`` characters' width, shows a longer choice elided in the middle
    and offers it whole as its tooltip (with the item's own tooltip, when it has one). Its popup lists
    every choice whole."""

    def __init__(self, chars: int = 12, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(chars)
        self.base_tip = ""  # what the box is for: kept under the current choice in its tooltip
        self.currentIndexChanged.connect(lambda _i: self._tip())
        self.model().dataChanged.connect(lambda *_: self._tip())

    def _tip(self) -> None:
        item = self.itemData(self.currentIndex(), Qt.ItemDataRole.ToolTipRole) if self.currentIndex() >= 0 else None
        text = self.currentText()
        self.setToolTip("\n".join(str(t) for t in dict.fromkeys((text, item, self.base_tip)) if t))

    def set_base_tip(self, tip: str) -> None:
        self.base_tip = tip
        self._tip()

    def _field(self, option: QtWidgets.QStyleOptionComboBox) -> int:
        field = self.style().subControlRect(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option,
                                            QtWidgets.QStyle.SubControl.SC_ComboBoxEditField, self)
        icon = self.iconSize().width() + 4 if not option.currentIcon.isNull() else 0
        return field.width() - icon

    def shown_text(self) -> str:
        """The current text as painted: whole, or elided in the middle to the room there is."""
        option = QtWidgets.QStyleOptionComboBox()
        self.initStyleOption(option)
        return self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideMiddle, self._field(option))

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802
        if self.isEditable():
            super().paintEvent(event)
            return
        painter = QtWidgets.QStylePainter(self)
        option = QtWidgets.QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideMiddle,
                                                           self._field(option))
        painter.drawControl(QtWidgets.QStyle.ControlElement.CE_ComboBoxLabel, option)
