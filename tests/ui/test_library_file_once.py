"""The library file is opened only through its connection, so a file dialog in the library's folder
cannot corrupt it (issue 43, docs/architecture.md "One connection to the library file").

What a user saw: the window open on a library, Datasets ▸ Import's dialog shown in the library's
folder. Qt's dialog guessed each file's type by reading it, opening and closing the library, its
``-wal`` and ``-shm`` inside the window's process; on POSIX a close drops every lock the process
holds on the file (SQLite's "How To Corrupt" §2.2). The next CLI write saw no other user, deleted
the ``-wal``/``-shm`` the window still had open, and from then on the window's writes went to a
deleted file: lost. Each round here replays that sequence for real (the menu's dialog, loaded on
the library's folder; a CLI child writing; the window reading and writing; a CLI child reading) and
checks both see each other's writes and the file is whole.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from studio.core.models import BuiltinGrader
from studio.ui.main_window import TAB_DATASETS
from tests.conftest import run_cli
from tests.ui.file_dialog_driver import when_loaded

ROWS = '{"input": "What is 2 + 2?", "target": "4"}\n'


def _import_action(win: Any) -> Any:
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "Data&sets")
    return next(a for a in menu.actions() if a.text().startswith("&Import"))


def _show_import_dialog(qtbot: Any, win: Any, folder: Path) -> list[str]:
    """Datasets ▸ Import…: the real dialog, in the library's folder, left open until every file there
    has been listed and looked up (All files shown, as a user looking for their file might), then
    cancelled. Returns the names it showed."""
    shown = when_loaded(qtbot, folder, lambda dialog: dialog.reject())
    _import_action(win).trigger()
    return shown


def _cli_json(db: Path, *args: str) -> Any:
    result = run_cli(*args, "--json", db=db)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _one_round(qtbot: Any, win: Any, db: Path, data: Path, n: int) -> None:
    library = win.ctx.library
    shown = _show_import_dialog(qtbot, win, db.parent)
    assert "data.jsonl" in shown

    # another process writes while the window is open
    result = run_cli("datasets", "import", str(data), "--name", f"from-cli-{n}", db=db)
    assert result.returncode == 0, result.stderr

    # the window reads it: its live view (data_version) and its own connection
    assert "datasets" in win.live.look()
    assert win.datasets_view.datasets.row_of(f"from-cli-{n}") is not None
    assert f"from-cli-{n}" in {d.name for d in library.datasets.list()}
    # and writes; the other process reads that
    library.graders.create(BuiltinGrader(key=f"from-window-{n}", function="exact_match"))
    assert f"from-window-{n}" in {g["key"] for g in _cli_json(db, "graders", "list")}
    assert {f"from-cli-{i}" for i in range(n + 1)} <= {d["name"] for d in _cli_json(db, "datasets", "list")}
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
    assert not {db.name, f"{db.name}-wal", f"{db.name}-shm"} & set(shown), shown  # the library's files hidden


def _check_after_quit(db: Path, rounds: int) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        datasets = {row[0] for row in conn.execute("SELECT name FROM datasets")}
        graders = {row[0] for row in conn.execute("SELECT key FROM graders")}
    conn.close()
    assert datasets == {f"from-cli-{n}" for n in range(rounds)}
    assert graders == {f"from-window-{n}" for n in range(rounds)}


def _rounds(qtbot: Any, window: Any, monkeypatch: pytest.MonkeyPatch, rounds: int) -> None:
    db = Path(window.ctx.db_path)
    monkeypatch.chdir(db.parent)  # the README's first command: the library in the current folder
    data = db.parent / "data.jsonl"
    data.write_text(ROWS, encoding="utf-8")
    window.tabs.setCurrentIndex(TAB_DATASETS)
    for n in range(rounds):
        _one_round(qtbot, window, db, data, n)
    window.close()
    window.ctx.close()
    _check_after_quit(db, rounds)


def test_import_dialog_in_the_library_folder_leaves_the_library_whole(
        qtbot: Any, window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _rounds(qtbot, window, monkeypatch, rounds=3)


@pytest.mark.slow
def test_import_dialog_in_the_library_folder_a_hundred_times(
        qtbot: Any, window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _rounds(qtbot, window, monkeypatch, rounds=100)


def test_the_library_dropped_on_the_importer_is_refused_unread(window: Any, tmp_path: Path) -> None:
    """A link to the library named like a dataset, dropped on Datasets ▸ Import: the preview says it
    is the library's file instead of reading it (a read would unlock the library)."""
    db = Path(window.ctx.db_path)
    link = tmp_path / "rows.jsonl"
    link.symlink_to(db)
    importer = window.datasets_view.open_import(link)
    status = importer.status.text()
    assert "is a file of the library open here" in status and str(link) in status, status
    assert not importer.import_button.isEnabled()
    with window.ctx.library.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
