"""Why a window is wider (or taller) than its screen: the widget whose minimum size forces it (issue 35).

Qt grows a top-level window to its layout's minimum size; that minimum is the sum, along each row
of a layout, of its widgets' minimum sizes. ``explain`` follows the widest minimum down from the
window: while one child accounts for (nearly) all of its parent's minimum it descends into it; where
no single child does, the parent's row is the cause: its widest children are named, each with the
minimum it asks for, and the widest is followed on to the widget at the bottom of it. The answer is one line a failing test can print ("RunPanel.toolbar: min 1390 px:
QPushButton 'Export CSV…' 120, ...").
"""

from __future__ import annotations

from studio.ui.qt import QtCore, QtWidgets

#: a child within this many pixels of its parent's minimum is taken to be the reason for it
WRAPPER_SLACK = 40

_SHRINK = QtWidgets.QSizePolicy.PolicyFlag.ShrinkFlag.value
_IGNORED = QtWidgets.QSizePolicy.Policy.Ignored


def _counted(widget: QtWidgets.QWidget) -> bool:
    """A hidden widget takes no room, except as a page of a stack: a stack is as wide as its widest page."""
    return not widget.isHidden() or isinstance(widget.parentWidget(), QtWidgets.QStackedWidget)


def min_width(widget: QtWidgets.QWidget) -> int:
    """The width a layout gives ``widget`` at least (Qt's qSmartMinSize, horizontally)."""
    if not _counted(widget):
        return 0
    policy = widget.sizePolicy().horizontalPolicy()
    width = 0
    if policy != _IGNORED:
        hint = widget.minimumSizeHint().width()
        width = hint if policy.value & _SHRINK else max(widget.sizeHint().width(), hint)
    if widget.minimumWidth() > 0:
        width = widget.minimumWidth()
    return max(0, min(width, widget.maximumWidth()))


def min_height(widget: QtWidgets.QWidget) -> int:
    """The height a layout gives ``widget`` at least (qSmartMinSize, vertically)."""
    if not _counted(widget):
        return 0
    policy = widget.sizePolicy().verticalPolicy()
    height = 0
    if policy != _IGNORED:
        hint = widget.minimumSizeHint().height()
        height = hint if policy.value & _SHRINK else max(widget.sizeHint().height(), hint)
    if widget.minimumHeight() > 0:
        height = widget.minimumHeight()
    return max(0, min(height, widget.maximumHeight()))


def name(widget: QtWidgets.QWidget) -> str:
    """``Owner.attribute`` when an ancestor keeps the widget as an attribute, else its class and text."""
    parent = widget.parentWidget()
    for _ in range(8):
        if parent is None:
            break
        for attribute, value in vars(parent).items():
            if value is widget:
                return f"{type(parent).__name__}.{attribute} ({type(widget).__name__})"
        parent = parent.parentWidget()
    text = ""
    for getter in ("text", "title", "windowTitle"):
        method = getattr(widget, getter, None)
        if callable(method):
            try:
                value = method()
            except TypeError:
                continue
            if isinstance(value, str) and value.strip():
                text = f" {value.strip()[:40]!r}"
                break
    label = widget.objectName()
    return f"{type(widget).__name__}{text}" + (f" #{label}" if label else "")


Node = QtWidgets.QWidget | QtWidgets.QLayout


def _items(node: Node, horizontal: bool) -> list[tuple[int, Node]]:
    """What ``node`` lays out, each with its minimum: a layout's items (widgets and nested layouts),
    else a widget's child widgets (a splitter, a tab widget)."""
    measure = min_width if horizontal else min_height
    layout = node if isinstance(node, QtWidgets.QLayout) else node.layout()
    found: list[tuple[int, Node]] = []
    if layout is not None:
        for index in range(layout.count()):
            item = layout.itemAt(index)
            if item.widget() is not None:
                if not item.widget().isWindow() and _counted(item.widget()):
                    found.append((measure(item.widget()), item.widget()))
            elif item.layout() is not None:
                size = item.layout().minimumSize()
                found.append((size.width() if horizontal else size.height(), item.layout()))
        return found
    assert isinstance(node, QtWidgets.QWidget)
    for child in node.findChildren(QtWidgets.QWidget, options=QtCore.Qt.FindChildOption.FindDirectChildrenOnly):
        if not child.isWindow() and _counted(child):
            found.append((measure(child), child))
    return found


def _label(node: Node) -> str:
    if isinstance(node, QtWidgets.QLayout):
        owner = node.parentWidget()
        return f"{type(node).__name__} in {name(owner) if owner is not None else '?'}"
    return name(node)


def explain(window: QtWidgets.QWidget, horizontal: bool = True) -> str:
    """The chain of widgets from ``window`` to the one whose minimum width (height) sets the window's."""
    chain: list[str] = []
    node: Node = window
    hint = window.minimumSizeHint()
    total = hint.width() if horizontal else hint.height()
    for _ in range(80):
        items = sorted(_items(node, horizontal), key=lambda pair: -pair[0])
        if not items or items[0][0] == 0:
            break
        widest, child = items[0]
        if widest < total - WRAPPER_SLACK:
            # no single item: the row of them is the reason; the widest of them is followed on
            row = ", ".join(f"{_label(c)} {w}" for w, c in items[:6] if w > 0)
            chain.append(f"[row of {row}]")
        elif not isinstance(child, QtWidgets.QLayout):
            chain.append(f"{_label(child)} {widest}")
        node, total = child, widest
    axis = "width" if horizontal else "height"
    return f"minimum {axis} via " + " > ".join(chain)
