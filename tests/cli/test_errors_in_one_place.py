"""Errors in one place (issue 32): ``main`` prints every ``StudioError`` once with its exit status,
commands do not translate them, and anything else (a bare ValueError of our own code) is a bug whose
traceback is written to a file the one line names, never shown as if it were a sentence for the user."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

import studio.cli.runs as runs
from studio.cli import EXIT_BUG, main


def test_a_bug_is_reported_with_the_file_holding_its_traceback(monkeypatch: pytest.MonkeyPatch, db_path: Path,
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(args: object, app: object) -> int:
        raise ValueError("a value our own code got wrong")

    monkeypatch.setattr(runs, "cmd_list", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["--db", str(db_path), "runs", "list"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "bug (ValueError" in err
    found = re.search(r"the traceback in (\S+)$", err.strip())
    assert found is not None
    report = Path(found[1])
    assert report.parent == tmp_path
    text = report.read_text()
    assert "Traceback (most recent call last)" in text and "ValueError: a value our own code got wrong" in text


def test_a_studio_error_is_one_sentence_with_its_commands_status(db_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db_path), "runs", "show", "999"]) == 1
    assert capsys.readouterr().err == "error: no run with id 999\n"
    # a run that cannot be done exits 2, whichever layer refused it
    assert main(["--db", str(db_path), "runs", "report", "999"]) == 2
    assert capsys.readouterr().err == "error: no run with id 999\n"
    assert main(["--db", str(db_path), "run", "nope", "nothing"]) == 2
    assert capsys.readouterr().err.startswith("error: no grader")
