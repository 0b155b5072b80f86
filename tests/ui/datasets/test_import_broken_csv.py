"""The import page with a broken CSV: the line is named before anything says "Ready to import"
(issue 43: a quote left open made three rows two, and the page said "✓ 2 samples read… Ready")."""

from __future__ import annotations

import html
from pathlib import Path

from studio.ui.datasets import DatasetsView
from studio.ui.qt import Qt

WAIT_MS = 10_000


def make_view(qtbot, app_ctx) -> DatasetsView:  # type: ignore[no-untyped-def]
    view = DatasetsView(app_ctx)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    return view


def status(importer) -> str:  # type: ignore[no-untyped-def]
    return html.unescape(importer.status.text())


def test_an_unterminated_quote_is_named_and_the_page_is_not_ready(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "three.csv"
    path.write_text('question,output\nq1,a1\n"q2,a2\nq3,a3\n', encoding="utf-8")
    view = make_view(qtbot, app_ctx)
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS) as checked:
        importer = view.open_import(path)
    assert checked.args == [False]
    text = status(importer)
    assert "Ready" not in text and "✓" not in text, text
    assert "Line 3:" in text and "never closed" in text, text
    assert importer.error is not None and importer.error.line == 3
    assert not importer.import_button.isEnabled()
    assert app_ctx.library.datasets.list() == []


def test_a_broken_record_past_the_preview_is_named_by_the_whole_file_check(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = "".join(f"q{i},a{i}\n" for i in range(40))
    path = tmp_path / "late.csv"
    path.write_text("question,output\n" + rows + 'q40,a"40\nq41,a41\n', encoding="utf-8")
    view = make_view(qtbot, app_ctx)
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS) as checked:
        importer = view.open_import(path)
    assert checked.args == [False]
    assert importer.preview.rowCount() == 20  # the first rows were fine
    text = status(importer)
    assert "Ready" not in text and "Line 42:" in text and "quote" in text, text
    assert not importer.import_button.isEnabled()


def test_the_count_the_page_shows_is_what_the_import_stores(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "multiline.csv"
    path.write_bytes(b'\xef\xbb\xbfquestion,output\r\n"two\r\nlines",a1\r\n\r\nq2,"say ""hi"""\r\nq3,a3\r\n')
    view = make_view(qtbot, app_ctx)
    with qtbot.waitSignal(view.importer.checked, timeout=WAIT_MS) as checked:
        importer = view.open_import(path)
    assert checked.args == [True]
    assert "✓ 3 samples read" in status(importer) and "Ready to import" in status(importer)
    assert importer.preview.rowCount() == 3
    with qtbot.waitSignal(importer.imported, timeout=WAIT_MS):
        qtbot.mouseClick(importer.import_button, Qt.MouseButton.LeftButton)
    assert app_ctx.library.datasets.get("multiline").sample_count == 3
