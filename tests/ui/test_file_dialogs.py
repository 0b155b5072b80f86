"""Every file dialog of the window (studio/ui/file_dialogs.py) lists a folder without opening a file
in it, hides the open library's files and refuses them by name; no other code makes a dialog.

Qt's own dialog reads every listed file to guess its type, which in the library's folder unlocked the
library (tests/ui/test_library_file_once.py replays what followed). Which files a dialog opens is
watched here from outside Python, with inotify: Qt's reads are C++ the audit hook cannot see.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.store import Library
from studio.ui import file_dialogs
from studio.ui.qt import QtWidgets
from tests.ui.file_dialog_driver import when_loaded

IN_OPEN = 0x00000020
IN_ISDIR = 0x40000000
_EVENT = struct.Struct("iIII")


class OpenedFiles:
    """The names of files opened in a folder (by any code of any process), from inotify."""

    def __init__(self, folder: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        assert libc.inotify_add_watch(self.fd, os.fsencode(folder), IN_OPEN) >= 0, os.strerror(ctypes.get_errno())

    def names(self) -> list[str]:
        out: list[str] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            at = 0
            while at < len(data):
                _, mask, _, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size:at + _EVENT.size + size].rstrip(b"\0").decode()
                at += _EVENT.size + size
                if name and not mask & IN_ISDIR:
                    out.append(name)

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[tuple[Path, Library]]:
    """A folder holding an open WAL library (with its -wal and -shm) and a dataset beside it."""
    db = tmp_path / "lib.sqlite"
    library = Library.open(db)
    library.datasets.list()
    (tmp_path / "data.jsonl").write_text('{"input": "q"}\n', encoding="utf-8")
    assert {p.name for p in tmp_path.iterdir()} >= {"lib.sqlite", "lib.sqlite-wal", "lib.sqlite-shm"}
    yield tmp_path, library
    library.close()


#: each helper, opened in a folder beside the library's (``d``, the current folder too)
CHOOSERS: dict[str, Callable[[Path], str | None]] = {
    "open": lambda d: file_dialogs.open_file(None, "Import dataset", str(d), "Datasets (*.jsonl)"),
    "save": lambda d: file_dialogs.save_file(None, "Export results", str(d / "run-1.csv"), "CSV files (*.csv)"),
    "open or new": lambda d: file_dialogs.open_or_new_file(None, "Open or create a library", "Library (*.sqlite)"),
    "folder": lambda d: file_dialogs.existing_directory(None, "Export to folder", str(d)),
}


@pytest.fixture
def elsewhere(folder: tuple[Path, Library], monkeypatch: pytest.MonkeyPatch) -> Path:
    other = folder[0] / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    return other


@pytest.mark.parametrize("kind", CHOOSERS)
def test_a_dialog_in_the_library_folder_opens_no_file_and_hides_the_library(
        qtbot: Any, folder: tuple[Path, Library], elsewhere: Path, kind: str) -> None:
    where, _ = folder
    opened = OpenedFiles(where)
    try:
        (where / "data.jsonl").read_bytes()
        assert opened.names() == ["data.jsonl"]  # the watch sees an open by this process
        shown = when_loaded(qtbot, where, lambda dialog: dialog.reject())
        assert CHOOSERS[kind](elsewhere) is None
        assert opened.names() == []
    finally:
        opened.close()
    assert not {"lib.sqlite", "lib.sqlite-wal", "lib.sqlite-shm"} & set(shown), shown
    assert ("data.jsonl" in shown) == (kind != "folder") and "elsewhere" in shown


def test_the_library_typed_by_name_is_refused_and_another_file_chosen(
        qtbot: Any, folder: tuple[Path, Library], elsewhere: Path) -> None:
    where, _ = folder
    refusals: list[str] = []

    def type_names(dialog: QtWidgets.QFileDialog) -> None:
        typed = dialog.findChild(QtWidgets.QLineEdit, "fileNameEdit")
        for name in ("lib.sqlite", "lib.sqlite-wal"):
            typed.setText(name)  # as a user types it: the dialog does not list it
            dialog.accept()
            assert dialog.isVisible()  # still open, the file not chosen
            box = dialog.findChild(QtWidgets.QMessageBox, "refusedLibraryFile")
            refusals.append(box.text())
            box.close()
            box.setParent(None)  # the next refusal's box is the only one
        typed.setText("data.jsonl")
        dialog.accept()

    when_loaded(qtbot, where, type_names)
    chosen = file_dialogs.open_file(None, "Import dataset", str(elsewhere), "All files (*)")
    assert chosen == str(where / "data.jsonl")
    assert len(refusals) == 2
    assert all("is a file of the library open here" in text for text in refusals), refusals
    assert f"{where / 'lib.sqlite'}" in refusals[0] and f"{where / 'lib.sqlite-wal'}" in refusals[1]


def test_no_other_code_makes_a_file_dialog() -> None:
    ui = Path(file_dialogs.__file__).parent
    makers = [str(path.relative_to(ui)) for path in ui.rglob("*.py")
              if "QFileDialog" in path.read_text(encoding="utf-8") and path.name != "file_dialogs.py"]
    assert makers == []
