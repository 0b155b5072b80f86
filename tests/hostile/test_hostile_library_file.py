"""A library file that is not one: random bytes, text, another program's SQLite database, a damaged
or cut library, a folder, a FIFO; and a row whose time is not a time. Each is one sentence and exit
2 from the real entry point, never a traceback, and another program's database is left unchanged.
The commands run in-process (``run_main``), a FIFO in a child."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from studio.core.models import Sample, Turn
from studio.core.store import Library
from tests.conftest import run_cli, run_main


def _one_sentence(result, path: Path) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], result.stderr
    assert "bug" not in result.stderr and "Traceback" not in result.stderr


def _library_cut_short(path: Path) -> None:
    with Library.open(path) as lib:  # a real library of many pages, then cut to its first few
        lib.datasets.create("qa", [Sample(id=f"s{i}", messages=[Turn(role="user", content="x" * 500)])
                                   for i in range(400)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


@pytest.mark.parametrize("kind", ["random", "text", "cut", "folder", "fifo"])
@pytest.mark.parametrize("command", [("datasets", "list"), ("graders", "list"), ("runs", "list", "--json")])
def test_a_file_that_is_not_a_library_is_one_sentence(kind: str, command: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite"
    if kind == "random":
        path.write_bytes(os.urandom(8192))
    elif kind == "text":
        path.write_text("name,score\na,1\n", encoding="utf-8")
    elif kind == "cut":
        _library_cut_short(path)
    elif kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    # in-process (``run_main``: exit code and streams as a child's), but a FIFO in a child, whose
    # timeout ends an open that would block
    run = run_cli if kind == "fifo" else run_main
    _one_sentence(run(*command, db=path, timeout=60), path)


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        con.execute("INSERT INTO notes (body) VALUES ('mine')")
    before = path.read_bytes()
    result = run_main("datasets", "list", db=path)
    _one_sentence(result, path)
    assert "another program's SQLite database (its tables: notes)" in result.stderr
    assert path.read_bytes() == before


def test_an_empty_file_and_an_old_library_still_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert run_main("datasets", "list", db=empty).returncode == 0
    fresh = tmp_path / "fresh.sqlite"
    Library.open(fresh).close()
    assert run_main("datasets", "list", db=fresh).returncode == 0


def test_a_grader_row_with_a_time_that_is_not_a_time(tmp_path: Path) -> None:
    """The lean `graders list --json` reads the rows itself: a bad time leaves the listing to the
    validated one, which shows that grader broken (named, with the reason) and lists the rest."""
    path = tmp_path / "library.sqlite"
    source = tmp_path / "g.grader.yaml"
    source.write_text("kind: function\nkey: g\nsource: |\n  async def grade(t): return 1.0\n", encoding="utf-8")
    assert run_main("graders", "create", str(source), db=path).returncode == 0
    with sqlite3.connect(path) as con:
        con.execute("UPDATE graders SET updated_at = 'not a time'")
    result = run_main("graders", "list", "--json", db=path)
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["broken"] is True and row["reason"].startswith("updated_at:"), row
    assert "Traceback" not in result.stderr and "bug" not in result.stderr
