"""Errors in one place, the window too (issue 32, item 7): a ``StudioError`` is shown as its sentence;
a bare ``ValueError`` or ``OSError`` from our own code is a bug, shown as the one line that names the
file its traceback was written to, by the same function the CLI's ``main`` uses (``bug_report``)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from studio.core.engine import events
from studio.core.errors import StudioError
from studio.core.models import BuiltinGrader
from studio.core.store import Library
from studio.ui.messages import describe_error, is_bug
from studio.ui.suites.page import SuitesPage


def _report_in(text: str, folder: Path) -> str:
    found = re.search(r"the traceback in (\S+)$", text)
    assert found is not None, text
    report = Path(found[1])
    assert report.parent == folder
    return report.read_text()


@pytest.mark.parametrize("bug", [ValueError("a value our own code got wrong"), OSError("a file our own code lost")])
def test_a_bare_value_or_os_error_is_a_bug_with_its_traceback_file(bug: Exception, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        raise bug
    except Exception as exc:
        caught = exc
    assert is_bug(caught)
    text = describe_error(caught)
    assert text.startswith(f"Grader Studio hit a bug ({type(bug).__name__}: ") and "\n" not in text
    report = _report_in(text, tmp_path)
    assert "Traceback (most recent call last)" in report and str(bug) in report
    assert describe_error(caught) == text and len(list(tmp_path.iterdir())) == 1  # one file per bug


def test_a_studio_error_stays_a_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    error = StudioError("the grader 'x' is locked")
    assert not is_bug(error) and describe_error(error) == "the grader 'x' is locked"
    assert list(tmp_path.iterdir()) == []


def test_a_run_childs_bug_names_the_file_its_main_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's error line carries the bug's sentence; the window shows it, and the child's ``main``
    names the same file (written once)."""
    from studio.core.errors import bug_report

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        raise ValueError("broken in the child")
    except ValueError as exc:
        caught = exc
    fields = events.error_fields(caught)
    assert fields["user_error"] is False
    shown = events.describe_error(events.decode(events.encode("error", **fields)) or {})
    assert shown == fields["report"] == bug_report(caught)
    assert "ValueError: broken in the child" in _report_in(shown, tmp_path)
    assert len(list(tmp_path.iterdir())) == 1


def test_the_suite_editor_shows_a_bug_of_the_library_as_a_bug_report(qtbot: Any, app_ctx: Any, library: Library,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    page = SuitesPage(app_ctx)
    qtbot.addWidget(page)
    page.new_from(["exact"])
    page.key.setText("Not A Key")
    assert not page.save()
    assert page.message.text() == "the suite key must be lower-case letters, digits, '.', '_' or '-'"

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("a suite our own code mangled")

    reports = tmp_path / "reports"
    reports.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(reports))
    monkeypatch.setattr(type(library.suites), "create", broken)
    page.key.setText("geo-suite")
    assert not page.save()
    shown = page.message.text()
    assert shown.startswith("Grader Studio hit a bug (ValueError: a suite our own code mangled)")
    assert "Traceback (most recent call last)" in _report_in(shown, reports)
