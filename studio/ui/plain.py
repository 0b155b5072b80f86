"""Data shown in Qt is plain text: one helper for every label, tooltip and message box.

Qt reads a string as HTML when it merely looks like HTML (``Qt::mightBeRichText``) in a ``QLabel``
left at its default ``AutoText``, in every tooltip and in a ``QMessageBox``: a dataset named
``<img src='file:///…'>`` would load and draw a local file, and a 3,000-row ``<table>`` would make a
48,000 px label. Names, ids, inputs, outputs, rationales and errors all come from files and servers
the user does not control, so the rule is by class, not by call site:

- ``PlainTextGuard`` (installed once on the application by the main window) turns every ``QLabel``
  still at ``AutoText`` into ``PlainText`` before it is first shown, and shows every tooltip (a
  widget's own, or an item view's ``ToolTipRole``) as the literal text. A label that really wants
  markup says ``RichText`` explicitly and escapes its data with ``esc``.
- ``plain_label`` and ``message_box`` are the explicit forms, for code that builds its own widgets.
"""

from __future__ import annotations

import html
import re

from .qt import QObject, Qt, QtCore, QtGui, QtWidgets

_EVENT = QtCore.QEvent.Type
#: a widget (or item view) whose tooltips are already escaped rich text sets this property to True
RICH_TOOLTIP = "studioRichToolTip"


#: U+200B ZERO WIDTH SPACE: an invisible place where a word-wrapped label may break a line
BREAK = "\u200b"
#: the longest run of characters without a place to break that a wrapped label is shown
LONG_WORD = 60
_LONG_RUN = re.compile(rf"\S{{{LONG_WORD}}}(?=\S)")


def breakable(text: str) -> str:
    """``text`` with an invisible break opportunity every ``LONG_WORD`` characters inside any longer
    unbroken run (a URL, a token, a server's one-line body). Why: a word-wrapped ``QLabel`` breaks
    lines only at spaces and asks for its longest word as its minimum width, so a 2,500-character
    error without a space made the window 18,000 px wide. For labels that show an error or a
    message built around one; the text stays the same to read."""
    return _LONG_RUN.sub(lambda m: m.group(0) + BREAK, text)


def esc(text: object) -> str:
    """``text`` escaped for a label that is explicitly ``RichText``."""
    return html.escape(str(text), quote=False)


#: the most of a text a tooltip shows: a pasted 3,000-row table as a name must not make a tooltip
#: taller than the screen (the whole text is in the field, the detail pane or an export)
TOOLTIP_LINES = 30
TOOLTIP_CHARS = 3000


def bounded(text: str, lines: int = TOOLTIP_LINES, chars: int = TOOLTIP_CHARS) -> str:
    """``text`` cut to ``lines`` lines and ``chars`` characters, saying how much was left out."""
    kept = text[:chars].splitlines()
    total = text.count("\n") + 1
    cut = text[:chars] != text or len(kept) > lines
    if not cut:
        return text
    kept = kept[:lines]
    shown = "\n".join(kept)
    more = total - len(kept)
    return shown + (f"\n… ({more:,} more lines)" if more > 0 else "…")


def as_tooltip(text: str) -> str:
    """Rich text that Qt shows as exactly ``text`` (line breaks kept, long lines wrapped), bounded."""
    return QtGui.Qt.convertFromPlainText(bounded(text), Qt.WhiteSpaceMode.WhiteSpaceNormal)


def make_plain(label: QtWidgets.QLabel) -> QtWidgets.QLabel:
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_label(text: str = "", parent: QtWidgets.QWidget | None = None) -> QtWidgets.QLabel:
    """A ``QLabel`` that never reads its text as HTML."""
    return make_plain(QtWidgets.QLabel(text, parent))


def message_box(icon: QtWidgets.QMessageBox.Icon, title: str, text: str,
                buttons: QtWidgets.QMessageBox.StandardButton, parent: QtWidgets.QWidget | None) -> QtWidgets.QMessageBox:
    """A ``QMessageBox`` whose text (an error naming a file, a sample, a server) is plain text."""
    box = QtWidgets.QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


class PlainTextGuard(QObject):
    """Application event filter: labels left at ``AutoText`` become plain text, and tooltips are shown
    as the literal text (see the module docstring)."""

    def eventFilter(self, watched: QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == _EVENT.Polish:
            if isinstance(watched, QtWidgets.QLabel) and watched.textFormat() == Qt.TextFormat.AutoText:
                watched.setTextFormat(Qt.TextFormat.PlainText)
        elif kind == _EVENT.ToolTip and isinstance(watched, QtWidgets.QWidget):
            return self._tooltip(watched, event)  # type: ignore[arg-type]
        return False

    def _tooltip(self, widget: QtWidgets.QWidget, event: QtGui.QHelpEvent) -> bool:
        text = _item_tooltip(widget, event.pos())
        if text is None:
            if widget.property(RICH_TOOLTIP) or not widget.toolTip():
                return False
            text = widget.toolTip()
        if not text:
            QtWidgets.QToolTip.hideText()
            event.ignore()
            return True
        QtWidgets.QToolTip.showText(event.globalPos(), as_tooltip(text), widget)
        return True


def _item_tooltip(widget: QtWidgets.QWidget, pos: QtCore.QPoint) -> str | None:
    """The tooltip an item view (or its header) would show at ``pos`` of its viewport; None when
    ``widget`` is not an item view's viewport, or the view's tooltips are its own rich text."""
    view = widget.parent()
    if not isinstance(view, QtWidgets.QAbstractItemView) or view.viewport() is not widget or view.property(RICH_TOOLTIP):
        return None
    model = view.model()
    if model is None:
        return ""
    if isinstance(view, QtWidgets.QHeaderView):
        section = view.logicalIndexAt(pos)
        value = model.headerData(section, view.orientation(), Qt.ItemDataRole.ToolTipRole) if section >= 0 else None
    else:
        index = view.indexAt(pos)
        value = index.data(Qt.ItemDataRole.ToolTipRole) if index.isValid() else None
    return value if isinstance(value, str) else ""


_GUARD: PlainTextGuard | None = None


def install_guard(app: QtCore.QCoreApplication | None = None) -> PlainTextGuard:
    """Install the guard on the application once (the main window calls this)."""
    global _GUARD
    app = app or QtWidgets.QApplication.instance()
    if _GUARD is None:
        _GUARD = PlainTextGuard()
    if app is not None and not app.property("studioPlainTextGuard"):
        app.installEventFilter(_GUARD)
        app.setProperty("studioPlainTextGuard", True)
    return _GUARD


def rich_label(markup: str = "", parent: QtWidgets.QWidget | None = None) -> QtWidgets.QLabel:
    """A label whose markup is the studio's own (a heading); any data in it goes through ``esc``."""
    label = QtWidgets.QLabel(markup, parent)
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


def short(text: object, limit: int = 120) -> str:
    """A name or id cut to ``limit`` characters for a header line (the full text is elsewhere): a
    75,000-character dataset name must not wrap into a label taller than the screen."""
    value = str(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"
