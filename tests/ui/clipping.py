"""Find text a window shows only in part: a label, button, placeholder, combo box, tab, header or cell
whose text needs more room than it has, where no tooltip offers the whole text (issue 24).

Each finding is one readable line ("QPushButton 'Start run': needs 92 px, has 80"), so a failing test
says what to fix. Scrolled-away content is not a finding (a scroll bar offers it); text cut by its own
box is.
"""

from __future__ import annotations

from studio.ui.eliding import ElidedLabel
from studio.ui.qt import Qt, QtCore, QtWidgets

SLACK = 2  # pixels of rounding between a size hint and the laid-out size


def _name(widget: QtWidgets.QWidget, text: str) -> str:
    return f"{type(widget).__name__} {text[:50]!r}"


def _shown(widget: QtWidgets.QWidget) -> bool:
    """Shown on screen: visible, and not wholly covered or scrolled away (a scroll area's own frame
    reports no region of its own, its viewport does)."""
    if not widget.isVisible():
        return False
    if isinstance(widget, QtWidgets.QAbstractScrollArea):
        return not widget.viewport().visibleRegion().isEmpty()
    return not widget.visibleRegion().isEmpty()


def _tip(widget: QtWidgets.QWidget) -> bool:
    return bool(widget.toolTip().strip())


def _label(label: QtWidgets.QLabel) -> str | None:
    if isinstance(label, ElidedLabel):
        return None if not label.is_elided() or _tip(label) else _name(label, label.full_text()) + ": elided"
    if not label.text().strip() or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    if label.wordWrap():
        needed = label.heightForWidth(label.contentsRect().width() + label.contentsMargins().left()
                                      + label.contentsMargins().right())
        if needed > label.height() + SLACK and not _tip(label):
            return _name(label, label.text()) + f": needs {needed} px of height, has {label.height()}"
        return None
    needed = label.sizeHint().width()
    if needed > label.width() + SLACK and not _tip(label):
        return _name(label, label.text()) + f": needs {needed} px, has {label.width()}"
    return None


def _button(button: QtWidgets.QAbstractButton) -> str | None:
    if not button.text().strip():
        return None
    needed = button.sizeHint().width()
    if needed > button.width() + SLACK and not _tip(button):
        return _name(button, button.text()) + f": needs {needed} px, has {button.width()}"
    return None


def _line_edit(edit: QtWidgets.QLineEdit) -> str | None:
    if edit.text() or not edit.placeholderText():
        return None
    margins = edit.textMargins()
    room = edit.contentsRect().width() - margins.left() - margins.right() - 4
    needed = edit.fontMetrics().horizontalAdvance(edit.placeholderText())
    if needed > room + SLACK and not _tip(edit):
        return _name(edit, edit.placeholderText()) + f": placeholder needs {needed} px, has {room}"
    return None


def _combo(combo: QtWidgets.QComboBox) -> str | None:
    text = combo.currentText()
    if not text:
        return None
    option = QtWidgets.QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option,
                                         QtWidgets.QStyle.SubControl.SC_ComboBoxEditField, combo)
    room = field.width() - (combo.iconSize().width() + 4 if not combo.itemIcon(combo.currentIndex()).isNull() else 0)
    needed = combo.fontMetrics().horizontalAdvance(text)
    item_tip = combo.itemData(combo.currentIndex(), Qt.ItemDataRole.ToolTipRole)
    if needed > room + SLACK and not _tip(combo) and not item_tip:
        return _name(combo, text) + f": needs {needed} px, has {room}"
    return None


def _tabs(bar: QtWidgets.QTabBar) -> list[str]:
    found = []
    for i in range(bar.count()):
        if not bar.isTabVisible(i):
            continue
        rect = bar.tabRect(i)
        needed = bar.tabSizeHint(i).width()
        if (rect.left() < 0 or rect.right() >= bar.width()) and not bar.tabToolTip(i):
            found.append(f"tab {bar.tabText(i)!r}: partly scrolled out of its bar ({rect} in {bar.width()} px)")
            continue
        if bar.elideMode() != Qt.TextElideMode.ElideNone and needed > rect.width() + SLACK and not bar.tabToolTip(i):
            found.append(f"tab {bar.tabText(i)!r}: needs {needed} px, has {rect.width()}")
    return found


def _header(header: QtWidgets.QHeaderView) -> list[str]:
    if header.orientation() != Qt.Orientation.Horizontal or header.model() is None:
        return []
    found = []
    model = header.model()
    style = header.style()
    margin = style.pixelMetric(QtWidgets.QStyle.PixelMetric.PM_HeaderMargin, None, header)
    arrow = style.pixelMetric(QtWidgets.QStyle.PixelMetric.PM_HeaderMarkSize, None, header)
    metrics = header.fontMetrics()
    for section in range(header.count()):
        if header.isSectionHidden(section) or header.sectionSize(section) == 0:
            continue
        left = header.sectionViewportPosition(section)
        width = header.sectionSize(section)
        if left < 0 or left + width > header.viewport().width() + SLACK:
            continue  # scrolled out of view, whole when scrolled to
        text = str(model.headerData(section, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole) or "")
        if not text:
            continue
        needed = metrics.horizontalAdvance(text) + 2 * margin
        if header.isSortIndicatorShown() and header.sortIndicatorSection() == section:
            needed += arrow + margin
        tip = model.headerData(section, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        if needed > width + SLACK and not tip:
            found.append(f"header {text!r}: needs {needed} px, has {width}")
    return found


def _cells(view: QtWidgets.QAbstractItemView) -> list[str]:
    model = view.model()
    if model is None:
        return []
    found: list[str] = []
    viewport = view.viewport().rect()
    delegate = view.itemDelegate()
    rows: list[QtCore.QModelIndex] = []

    def collect(parent: QtCore.QModelIndex) -> None:
        for row in range(model.rowCount(parent)):
            first = model.index(row, 0, parent)
            rect = view.visualRect(first)
            if rect.isValid() and rect.top() > viewport.bottom():
                return
            rows.append(first)
            if isinstance(view, QtWidgets.QTreeView) and view.isExpanded(first):
                collect(first)

    collect(QtCore.QModelIndex())
    try:
        columns = model.columnCount(QtCore.QModelIndex())
    except TypeError:  # a list widget's model keeps columnCount private: one column
        columns = 1
    for first in rows:
        for column in range(columns):
            index = first.siblingAtColumn(column)
            rect = view.visualRect(index)
            if not rect.isValid() or not rect.intersects(viewport) or rect.left() < 0:
                continue
            if view.indexWidget(index) is not None or (
                    isinstance(view, QtWidgets.QTableView) and view.isColumnHidden(column)):
                continue
            text = model.data(index, Qt.ItemDataRole.DisplayRole)
            if text is None or not str(text).strip():
                continue
            option = QtWidgets.QStyleOptionViewItem()
            option.initFrom(view)
            option.font = view.font()
            option.rect = rect
            needed = delegate.sizeHint(option, index).width()
            room = min(rect.right(), viewport.right()) - rect.left() + 1
            wraps = isinstance(view, (QtWidgets.QTableView, QtWidgets.QListView)) and view.wordWrap()
            if wraps:  # a word-wrapped cell needs its height: cut unless all its lines fit
                lines = view.fontMetrics().boundingRect(QtCore.QRect(0, 0, max(room - 8, 1), 100000),
                                                        int(Qt.TextFlag.TextWordWrap), str(text))
                cut = needed > room and lines.height() > rect.height() + SLACK
            else:
                cut = needed > room + SLACK
            if cut and not model.data(index, Qt.ItemDataRole.ToolTipRole):
                found.append(f"{type(view).__name__} cell {str(text)[:40]!r}: needs {needed} px, has {room}")
    return found


def clipped_texts(window: QtWidgets.QWidget) -> list[str]:
    """Every text ``window`` shows in part without a tooltip offering it whole."""
    found: list[str] = []
    for widget in window.findChildren(QtWidgets.QWidget):
        if not _shown(widget):
            continue
        problem: str | None = None
        if isinstance(widget, QtWidgets.QLabel):
            problem = _label(widget)
        elif isinstance(widget, QtWidgets.QAbstractButton) and not isinstance(widget.parentWidget(), QtWidgets.QTabBar):
            problem = _button(widget)
        elif isinstance(widget, QtWidgets.QLineEdit) and not isinstance(widget.parentWidget(), (
                QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox)):
            problem = _line_edit(widget)
        elif isinstance(widget, QtWidgets.QComboBox):
            problem = _combo(widget)
        elif isinstance(widget, QtWidgets.QTabBar):
            found += _tabs(widget)
        elif isinstance(widget, QtWidgets.QHeaderView):
            found += _header(widget)
        elif isinstance(widget, QtWidgets.QAbstractItemView) and not isinstance(widget, QtWidgets.QHeaderView):
            found += _cells(widget)
        if problem:
            found.append(problem)
    return found


def visible_rows(view: QtWidgets.QTableView) -> int:
    """Rows wholly inside the view's viewport."""
    height = view.viewport().height()
    count = 0
    for row in range(view.model().rowCount()):
        top = view.rowViewportPosition(row)
        if top < 0:
            continue
        if top + view.rowHeight(row) > height:
            break
        count += 1
    return count


def rows_that_fit(view: QtWidgets.QTableView) -> int:
    """How many rows of the view's row height its viewport holds (the rows there are or not)."""
    return view.viewport().height() // max(view.verticalHeader().defaultSectionSize(), 1)
