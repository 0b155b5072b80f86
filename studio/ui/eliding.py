"""A one-line label that ends in "…" when it has not the room, and then offers the whole text as its
tooltip: a long grader name neither widens the window nor is cut without a word (issue 24)."""

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
