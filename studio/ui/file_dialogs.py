"""Every file dialog of the window, kept away from the library file (docs/architecture.md, "One
connection to the library file").

Qt's file dialog guesses each listed file's type by reading its first bytes (the icon provider asks
``QMimeDatabase`` to look at the content), in the window's process: a dialog showing the library's
folder opened and closed the library, its ``-wal`` and ``-shm``, and on POSIX that close drops the
locks SQLite holds on them, so the next writer in another process deleted the files the window was
still writing to (``studio/core/store/file_guard.py``). So every dialog here:

- is Qt's own widget dialog: a platform's native dialog (GTK's, in process) sniffs content the same
  way and cannot be told not to;
- types and draws each file by its name only (``NameOnlyIcons``): nothing in a listed folder is
  opened, whatever it is (checked with strace by tests/ui/test_file_dialogs.py);
- hides the files of the library open in this process and refuses them when typed by name (a save
  over the library would replace it; a dataset read from it would unlock it).

Nothing else in studio/ui makes a ``QFileDialog`` (tests/ui/test_file_dialogs.py checks).
"""

from __future__ import annotations

from studio.core.store.file_guard import LibraryFileInUse, is_library_file

from .plain import message_box
from .qt import QtCore, QtGui, QtWidgets

_Dialog = QtWidgets.QFileDialog


class NameOnlyIcons(QtWidgets.QFileIconProvider):
    """A file's icon and type from its name: Qt's own provider reads the file to guess them."""

    def icon(self, what: QtGui.QAbstractFileIconProvider.IconType | QtCore.QFileInfo) -> QtGui.QIcon:
        if isinstance(what, QtCore.QFileInfo):
            kind = QtWidgets.QFileIconProvider.IconType
            return super().icon(kind.Folder if what.isDir() else kind.File)
        return super().icon(what)

    def type(self, info: QtCore.QFileInfo) -> str:
        if info.isDir():
            return "Folder"
        by_name = QtCore.QMimeDatabase.MatchMode.MatchExtension  # the name's glob, never the content
        return QtCore.QMimeDatabase().mimeTypeForFile(info.fileName(), by_name).comment()


class _HideLibraryFiles(QtCore.QSortFilterProxyModel):
    def filterAcceptsRow(self, row: int, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex) -> bool:  # noqa: N802
        model = self.sourceModel()
        if not isinstance(model, QtWidgets.QFileSystemModel):
            return True
        return not is_library_file(model.filePath(model.index(row, 0, parent)))


class SafeFileDialog(QtWidgets.QFileDialog):
    """Qt's widget dialog, reading no file it lists and refusing the open library's files."""

    def __init__(self, parent: QtWidgets.QWidget | None, title: str, directory: str = "",
                 filters: str = "") -> None:
        super().__init__(parent, title, directory, filters)
        # set before the event loop runs: the model only looks files up as its listing arrives
        self.setOption(_Dialog.Option.DontUseNativeDialog, True)
        self.icons = NameOnlyIcons()  # the dialog does not own it
        self.setIconProvider(self.icons)
        self.setProxyModel(_HideLibraryFiles(self))

    def accept(self) -> None:
        refused = [path for path in self.selectedFiles() if is_library_file(path)]
        if refused:
            box = message_box(QtWidgets.QMessageBox.Icon.Warning, self.windowTitle(),
                              str(LibraryFileInUse(refused[0])), QtWidgets.QMessageBox.StandardButton.Ok, self)
            box.setObjectName("refusedLibraryFile")
            box.open()
            return
        super().accept()


def _chosen(dialog: SafeFileDialog) -> str | None:
    if not dialog.exec():
        return None
    files = dialog.selectedFiles()
    return files[0] if files and files[0] else None


def open_file(parent: QtWidgets.QWidget | None, title: str, directory: str = "", filters: str = "") -> str | None:
    """An existing file to read (``QFileDialog.getOpenFileName``); None when cancelled."""
    dialog = SafeFileDialog(parent, title, directory, filters)
    dialog.setFileMode(_Dialog.FileMode.ExistingFile)
    return _chosen(dialog)


def save_file(parent: QtWidgets.QWidget | None, title: str, suggested: str = "", filters: str = "") -> str | None:
    """A file to write, an existing one confirmed (``QFileDialog.getSaveFileName``)."""
    dialog = SafeFileDialog(parent, title, suggested, filters)
    dialog.setAcceptMode(_Dialog.AcceptMode.AcceptSave)
    dialog.setFileMode(_Dialog.FileMode.AnyFile)
    return _chosen(dialog)


def open_or_new_file(parent: QtWidgets.QWidget | None, title: str, filters: str = "") -> str | None:
    """A file to open or to create (a library file), no overwrite question."""
    dialog = SafeFileDialog(parent, title, "", filters)
    dialog.setFileMode(_Dialog.FileMode.AnyFile)
    dialog.setOption(_Dialog.Option.DontConfirmOverwrite, True)
    dialog.setAcceptMode(_Dialog.AcceptMode.AcceptOpen)
    return _chosen(dialog)


def existing_directory(parent: QtWidgets.QWidget | None, title: str, directory: str = "") -> str | None:
    """A folder (``QFileDialog.getExistingDirectory``)."""
    dialog = SafeFileDialog(parent, title, directory)
    dialog.setFileMode(_Dialog.FileMode.Directory)
    dialog.setOption(_Dialog.Option.ShowDirsOnly, True)
    return _chosen(dialog)
