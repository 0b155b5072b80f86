"""A library open in a process is touched there only through SQLite (store/file_guard.py): any other
open, replacement, removal or truncation of the library, its ``-wal``/``-shm``/``-journal`` (by any
name: a link too) is refused with a sentence, since on POSIX closing such a descriptor drops the
process's locks on the library and another process then deletes the files this one still writes to.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from studio.core.models import BuiltinGrader
from studio.core.store import Library
from studio.core.store.file_guard import LibraryFileInUse, held, is_library_file
from studio.core.store.watch import LibraryWatcher
from tests.conftest import run_cli


def _touches(path: Path) -> list[tuple[str, object]]:
    """What a helper, a dropped file or an ``--output`` naming the library could do to it."""
    copy = path.with_name("copy")
    return [("read", lambda: path.read_bytes()), ("open for writing", lambda: open(path, "ab")),
            ("os.open", lambda: os.open(path, os.O_RDONLY)), ("copy from", lambda: shutil.copy(path, copy)),
            ("replace", lambda: os.replace(copy, path)), ("remove", lambda: os.remove(path)),
            ("truncate", lambda: os.truncate(path, 0))]


def test_an_open_library_s_files_are_refused_to_everything_but_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite"
    (tmp_path / "copy").write_text("not a library")
    library = Library.open(db)
    library.graders.create(BuiltinGrader(key="kept", function="exact_match"))
    (tmp_path / "link.jsonl").symlink_to(db)
    (tmp_path / "sub").mkdir()
    names = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}-journal"), tmp_path / "link.jsonl",
             tmp_path / "sub" / ".." / "lib.sqlite"]
    assert {str(db.resolve()), f"{db.resolve()}-wal", f"{db.resolve()}-shm"} <= held()
    for name in names:
        assert is_library_file(name)
        for what, touch in _touches(name):
            with pytest.raises(LibraryFileInUse, match="is a file of the library open here"):
                touch()  # type: ignore[operator]
            assert what
    assert not is_library_file(tmp_path / "copy") and not is_library_file(tmp_path / "lib.sqlite-other")
    assert (tmp_path / "copy").read_text() == "not a library"  # other files as before
    assert [g.key for g in library.graders.list()] == ["kept"]
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
    library.close()
    # closed: the file is an ordinary file again
    assert not is_library_file(db) and str(db.resolve()) not in held()
    assert db.read_bytes().startswith(b"SQLite format 3\0")


def test_every_connection_counts_until_the_last_closes(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite"
    first, second = Library.open(db), Library.open(db)
    watcher = LibraryWatcher(first)
    first.close()
    assert is_library_file(db)  # the second library and the watcher still have it open
    second.close()
    assert is_library_file(db)
    watcher.close()
    assert not is_library_file(db)


def test_a_library_dropped_without_close_is_released_with_its_engine(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite"
    library = Library.open(db)
    library.datasets.list()
    assert is_library_file(db)
    del library
    gc.collect()
    assert not is_library_file(db)


def test_a_memory_library_and_other_sqlite_files_are_not_guarded(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).close()
    with Library.open(":memory:") as memory:
        memory.datasets.list()
        assert str(other.resolve()) not in held() and not is_library_file(other)
        assert other.read_bytes() == b""  # a SQLite file no library of this process has open


def test_the_cli_refuses_to_write_over_its_own_library(tmp_path: Path) -> None:
    """A real CLI child told to write an export onto the library (or its ``-wal``) it has open: the
    write used to replace the library with the export; it is refused with a sentence instead."""
    db = tmp_path / "lib.sqlite"
    with Library.open(db) as library:
        library.graders.create(BuiltinGrader(key="kept", function="exact_match"))
    for name in (db, Path(f"{db}-wal")):
        result = run_cli("export", "kept", "--to", "openai", "-o", str(name), db=db)
        assert result.returncode == 1, result.stderr
        assert f"error: {name} is a file of the library open here" in result.stderr
        assert "Traceback" not in result.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [row[0] for row in conn.execute("SELECT key FROM graders")] == ["kept"]
    conn.close()


def test_files_of_the_same_names_elsewhere_are_ordinary_files(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Named like the library but in another folder (relative to the current folder, or removed by
    ``shutil.rmtree`` by name inside an open folder): read, replaced and removed as any file."""
    library = Library.open(tmp_path / "lib.sqlite")
    library.datasets.list()
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    for name in ("lib.sqlite", "lib.sqlite-wal", "lib.sqlite-shm"):
        (other / name).write_text("someone else's")
        assert (other / name).read_text() == "someone else's" and not is_library_file(other / name)
    os.replace(other / "lib.sqlite-shm", other / "lib.sqlite-wal")
    shutil.rmtree(other)
    assert not other.exists()
    with pytest.raises(LibraryFileInUse):
        shutil.rmtree(tmp_path)  # the library's own, removed by name inside its open folder
    assert is_library_file("lib.sqlite") and [d.name for d in library.datasets.list()] == []
    library.close()
