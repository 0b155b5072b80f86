"""Driving a modal file dialog (studio/ui/file_dialogs.py) from a test: once it has loaded a folder,
every file in it listed and looked up (what used to read the files), hand it to the test.

Shared by tests/ui/test_file_dialogs.py and tests/ui/test_library_file_once.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.ui.qt import QTimer, QtWidgets

#: how long a loaded machine may take to list a folder of a few files
LOAD_MS = 20_000


def listed(dialog: QtWidgets.QFileDialog) -> list[str]:
    """The names the dialog's list shows."""
    view = dialog.findChild(QtWidgets.QListView, "listView")
    shown = view.model()
    return [shown.index(r, 0, view.rootIndex()).data() for r in range(shown.rowCount(view.rootIndex()))]


def _looked_up(model: QtWidgets.QFileSystemModel, folder: Path, names: set[str]) -> bool:
    root = model.index(str(folder))
    types = {model.fileName(model.index(r, 0, root)): model.type(model.index(r, 0, root))
             for r in range(model.rowCount(root))}
    return names <= types.keys() and all(types[name] for name in names)


def when_loaded(qtbot: Any, folder: Path, then: Callable[[QtWidgets.QFileDialog], None]) -> list[str]:
    """Arrange for the next modal file dialog to go to ``folder`` (unless it opened there), show every
    file, and once each has been looked up, ``then(dialog)``; the dialog is cancelled if ``then``
    leaves it open or anything fails. Returns the names it showed."""
    seen: list[str] = []

    def look() -> None:
        dialog = QtWidgets.QApplication.activeModalWidget()
        try:
            assert isinstance(dialog, QtWidgets.QFileDialog), dialog
            model = dialog.findChild(QtWidgets.QFileSystemModel)
            if dialog.fileMode() == QtWidgets.QFileDialog.FileMode.Directory:
                names = {p.name for p in folder.iterdir() if p.is_dir()}  # only folders are rows
            else:
                dialog.setNameFilter("All files (*)")
                names = {p.name for p in folder.iterdir()}
            if Path(dialog.directory().absolutePath()).resolve() != folder.resolve():
                dialog.setDirectory(str(folder))
            # a folder's entries arrive (and are looked up) in the batch its last row arrives in
            qtbot.waitUntil(lambda: _looked_up(model, folder, names), timeout=LOAD_MS)
            seen.extend(listed(dialog))
            then(dialog)
        finally:
            if isinstance(dialog, QtWidgets.QDialog) and dialog.isVisible():
                dialog.reject()

    QTimer.singleShot(0, look)
    return seen
