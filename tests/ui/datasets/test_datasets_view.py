"""Datasets view: import with preview and format picker, broken lines named, drag and drop, browsing."""

from __future__ import annotations

import html
import json
from pathlib import Path

from studio.core.models import Sample, Turn
from studio.ui.datasets import DatasetsView
from studio.ui.qt import Qt, QtCore, QtGui

WAIT_MS = 10_000


def adaptive_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        rows.append({
            "id": f"q{i}",
            "messages": [
                {"role": "system", "content": "Answer from the documents."},
                {"role": "document", "content": f"Paris is the capital of France. (doc {i})"},
                {"role": "user", "content": f"Question {i}: what is the capital of France?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": f"call{i}", "name": "lookup_capital", "arguments": '{"country": "France"}'}]},
                {"role": "tool", "content": "Paris", "tool_call_id": f"call{i}"},
            ],
            "completion": "Paris",
            "metadata": {"expected": "Paris"},
        })
    return rows


def write_jsonl(path: Path, rows: list, broken_line: int | None = None) -> Path:
    lines = [json.dumps(r) for r in rows]
    if broken_line is not None:
        lines.insert(broken_line - 1, '{"id": "bad", "messages": [')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_view(qtbot, app_ctx) -> DatasetsView:  # type: ignore[no-untyped-def]
    view = DatasetsView(app_ctx)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    return view


def test_empty_state_then_import_preview_and_browse(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = make_view(qtbot, app_ctx)
    assert view.pages.currentWidget() is view.empty
    path = write_jsonl(tmp_path / "capitals.jsonl", adaptive_rows(30))
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS) as checked:
        importer = view.open_import(path)
    assert checked.args == [True]
    assert importer.preview.rowCount() == 20  # the preview reads only the first rows
    assert importer.preview.item(0, 0).text() == "q0"
    assert "30 samples" in importer.status.text() and "adaptive" in importer.status.text()
    assert importer.name.text() == "capitals" and importer.import_button.isEnabled()

    with qtbot.waitSignal(importer.imported, timeout=WAIT_MS):
        qtbot.mouseClick(importer.import_button, Qt.MouseButton.LeftButton)
    assert app_ctx.library.datasets.get("capitals").sample_count == 30
    assert view.pages.currentWidget() is view.browse_page
    assert view.current_dataset().name == "capitals"
    assert view.samples.rowCount() == 30
    view.select_sample(3)
    text = view.thread_view.toPlainText()
    assert "Question 3" in text and "document 1" in text and "lookup_capital" in text
    assert '"country": "France"' in text and "expected" in text


def test_broken_line_is_named_and_nothing_imported(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = make_view(qtbot, app_ctx)
    # beyond the preview: found by the background read of the whole file
    path = write_jsonl(tmp_path / "late.jsonl", adaptive_rows(40), broken_line=33)
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS) as checked:
        importer = view.open_import(path)
    assert checked.args == [False]
    assert importer.preview.rowCount() == 20
    assert "Line 33" in importer.status.text() and "not valid JSON" in importer.status.text()
    assert importer.error is not None and importer.error.line == 33
    assert not importer.import_button.isEnabled()

    # within the preview: reported at once, the preview stays empty
    early = write_jsonl(tmp_path / "early.jsonl", adaptive_rows(5), broken_line=2)
    with qtbot.waitSignal(importer.checked, timeout=WAIT_MS) as checked:
        view.open_import(early)
    assert checked.args == [False]
    assert "Line 2" in importer.status.text() and importer.preview.rowCount() == 0
    assert app_ctx.library.datasets.list() == []


def test_a_repeated_id_is_named_by_the_import_and_nothing_is_kept(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole-file check holds no id per line (a million-row file); the import that follows
    finds the repeat in the database and names both lines, keeping nothing."""
    rows = adaptive_rows(30)
    rows[24]["id"] = "q7"
    path = write_jsonl(tmp_path / "twice.jsonl", rows)
    view = make_view(qtbot, app_ctx)
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS) as checked:
        importer = view.open_import(path)
    assert checked.args == [True]
    qtbot.mouseClick(importer.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "duplicate" in importer.status.text(), timeout=WAIT_MS)
    status = html.unescape(importer.status.text())
    assert "Line 25: duplicate" in status and "'q7'" in status and "first on line 8" in status, status
    assert "Traceback" not in status
    assert [d.name for d in app_ctx.library.datasets.list()] == []


def test_format_picker_rereads_the_file(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = make_view(qtbot, app_ctx)
    path = tmp_path / "qa.csv"
    path.write_text("question,target,output_text\nWhat is 2+2?,4,4\nCapital of Italy?,Rome,Milan\n", encoding="utf-8")
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS):
        importer = view.open_import(path)
    assert "format mka1" in importer.status.text()
    with qtbot.waitSignal(importer.checked, timeout=WAIT_MS) as checked:
        importer.set_format("flat")
    assert checked.args == [True] and "format flat" in importer.status.text()
    assert importer.preview.item(1, 1).text() == "Capital of Italy?"
    # a format the rows do not fit: the error names the line and the format
    with qtbot.waitSignal(importer.checked, timeout=WAIT_MS) as checked:
        importer.set_format("adaptive")
    assert checked.args == [False] and "Line 2" in importer.status.text() and "messages" in importer.status.text()


def test_drop_a_file_opens_the_import_page(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = make_view(qtbot, app_ctx)
    path = write_jsonl(tmp_path / "dropped.jsonl", adaptive_rows(3))
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(path))])
    point = QtCore.QPointF(view.width() / 2, view.height() / 2)
    enter = QtGui.QDragEnterEvent(point.toPoint(), Qt.DropAction.CopyAction, mime,
                                  Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    view.dragEnterEvent(enter)
    assert enter.isAccepted()
    other = QtCore.QMimeData()
    other.setUrls([QtCore.QUrl.fromLocalFile(str(tmp_path / "notes.txt"))])
    refused = QtGui.QDragEnterEvent(point.toPoint(), Qt.DropAction.CopyAction, other,
                                    Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    view.dragEnterEvent(refused)
    assert not refused.isAccepted()
    drop = QtGui.QDropEvent(point, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS):
        view.dropEvent(drop)
    assert view.pages.currentWidget() is view.importer
    assert view.importer.path == path and view.importer.name.text() == "dropped"


def test_samples_are_paged_not_loaded(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    samples = (Sample(id=f"s{i}", messages=[Turn(role="user", content=f"q{i}")], completion=f"a{i}")
               for i in range(5000))
    app_ctx.library.datasets.create("big", samples)
    view = make_view(qtbot, app_ctx)
    view.select_dataset("big")
    assert view.samples.rowCount() == 5000
    view.sample_table.scrollToBottom()
    qtbot.wait(20)
    view.select_sample(4999)
    assert "q4999" in view.thread_view.toPlainText()
    assert view.samples.materialised_rows() <= 600


def test_a_sample_that_does_not_validate_is_named_and_the_rest_browse(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    """A teammate's sample JSON that is no sample: the browser names it (dataset, sample, repair)
    where the thread would be, and the other samples still show."""
    from sqlalchemy import text

    app_ctx.library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"q{i}")])
                                          for i in range(3)])
    with app_ctx.library.engine.begin() as conn:
        conn.execute(text("UPDATE samples SET data = :d WHERE sample_id = 's1'"), {"d": json.dumps({"id": 5})})
    view = make_view(qtbot, app_ctx)
    view.select_dataset("d")
    view.select_sample(1)
    shown = view.thread_view.toPlainText()
    assert "“d #1”" in shown and "is broken" in shown and "datasets delete d" in shown
    view.select_sample(2)
    assert "q2" in view.thread_view.toPlainText()
