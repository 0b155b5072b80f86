"""The run page's grader picker, for suites: saved suites as entries of their own, and a one-off
suite of several graders picked in a checklist ("Several graders…")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..qt import Qt, QtWidgets, tool_button

if TYPE_CHECKING:
    from studio.core.store.library import Library

    from ..context import AppContext

ONE_OFF = "graders:"  # the picker's data of a one-off suite: "graders:a,b,c"


class PickerHost(Protocol):
    """What the "Several…" row needs of the run page holding the picker (a protocol: the page
    imports this module)."""

    several_button: QtWidgets.QToolButton

    @property
    def ctx(self) -> AppContext: ...

    @property
    def grader(self) -> QtWidgets.QComboBox: ...


def add_suites(combo: QtWidgets.QComboBox, library: Library) -> None:
    """Append the live suites to ``combo`` (data: the suite key; a suite key is never a grader's)."""
    for record in library.suites.list():
        count = len(record.definition.graders)
        combo.addItem(f"Suite: {record.name or record.key}  ({count} graders)", record.key)
        combo.setItemData(combo.count() - 1, ", ".join(record.definition.grader_keys()), Qt.ItemDataRole.ToolTipRole)


def add_one_off(combo: QtWidgets.QComboBox, keys: list[str]) -> None:
    """Add (or reuse) the entry of a one-off suite of ``keys`` and select it."""
    data = ONE_OFF + ",".join(keys)
    index = combo.findData(data)
    if index < 0:
        combo.addItem(f"Graders: {', '.join(keys)}", data)
        index = combo.count() - 1
    combo.setCurrentIndex(index)


def one_off_keys(data: object) -> list[str] | None:
    """The graders of a one-off entry's data, else None."""
    if isinstance(data, str) and data.startswith(ONE_OFF):
        return [k for k in data[len(ONE_OFF):].split(",") if k]
    return None


def fill_versions(combo: QtWidgets.QComboBox, library: Library, key: str) -> bool:
    """The versions of suite ``key`` into ``combo`` (True), or False when ``key`` names no suite."""
    if one_off_keys(key) is not None:
        combo.addItem("current versions", None)
        return True
    if not library.suites.exists(key):
        return False
    record = library.suites.get(key)
    for version in sorted(library.suites.versions(key), key=lambda v: -v.version):
        current = " (current)" if version.version == record.current_version else ""
        combo.addItem(f"v{version.version}{current}", version.version)
    return True


def grader_row(panel: PickerHost) -> QtWidgets.QWidget:
    """The run page's grader picker with a "Several…" button beside it: tick graders, run them as a
    one-off suite (one pass over the dataset, a score column each)."""
    from .page import GraderChecklist

    row = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(panel.grader, 1)
    button = tool_button("Several…")
    button.setToolTip("Run several graders together over the dataset (a one-off suite)")

    def pick() -> None:
        dialog = GraderChecklist(panel.ctx, "Run several graders",
                                 parent=panel if isinstance(panel, QtWidgets.QWidget) else None)
        current = one_off_keys(panel.grader.currentData())
        if current:
            dialog.check(current)
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted and dialog.chosen():
            add_one_off(panel.grader, dialog.chosen())

    button.clicked.connect(pick)
    layout.addWidget(button)
    row.setFocusProxy(panel.grader)
    panel.several_button = button
    return row
