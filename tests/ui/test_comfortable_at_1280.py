"""At 1280x800 every page is comfortable, not only fitting (issue 24): no text shown in part without a
tooltip offering it whole, the results grid keeps at least 12 rows beside an open detail pane that reads
a 3-line rationale without scrolling, the judge designer shows at least three few-shot examples with
whole headers, and the empty Agreement page says how to get labels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from clipping import clipped_texts, rows_that_fit, visible_rows

from studio.core.demo import build_demo
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models.labels import LabelInput
from studio.ui.main_window import TAB_DATASETS, TAB_GRADER, TAB_RUN
from studio.ui.qt import QtCore, QtWidgets

SIZE = (1280, 800)
RATIONALE = ("The answer names Toronto, but the capital of Canada is Ottawa.\n"
             "Toronto is the largest city, which is a common confusion.\n"
             "The answer is confident and wrong, so it fails the criterion.")
HERE = Path(__file__).resolve().parent


def _settle(qtbot: Any, window: Any) -> None:
    window.resize(*SIZE)
    qtbot.waitUntil(lambda: window.isVisible())
    for _ in range(3):
        QtWidgets.QApplication.processEvents()


def _assert_readable(window: Any, page: str) -> None:
    problems = clipped_texts(window)
    assert not problems, f"{page}: text shown in part without a tooltip:\n" + "\n".join(problems)


@pytest.fixture(autouse=True)
def app_font(qapp: Any) -> Any:
    """The font the studio runs with (``ui/app.py``: at least 10 pt), not the test platform's 9 pt."""
    before = qapp.font()
    font = qapp.font()
    font.setPointSizeF(max(10.0, font.pointSizeF()))
    qapp.setFont(font)
    yield
    qapp.setFont(before)


@pytest.fixture
def demo_window(qtbot: Any, window: Any, ctx: Any) -> Any:
    build_demo(ctx.library)
    run = run_grader(ctx.library, "qa-token-f1", "qa", RunOptions())
    with ctx.library.engine.begin() as conn:  # a typical judge's rationale: three lines
        conn.exec_driver_sql("UPDATE results SET rationale = ? WHERE run_id = ? AND sample_idx = 1",
                             (RATIONALE, run.id))
    ctx.graders_changed.emit()
    ctx.datasets_changed.emit()
    ctx.runs_changed.emit()
    window.resize(*SIZE)
    window.show()
    return window


def test_every_grader_page_is_readable(qtbot: Any, demo_window: Any, ctx: Any) -> None:
    window = demo_window
    for record in ctx.library.graders.list():
        assert window.open_grader(record.key)
        _settle(qtbot, window)
        body = window.page.body
        sections = getattr(body, "sections", None)
        for index in range(sections.count() if sections is not None else 1):
            if sections is not None:
                sections.setCurrentIndex(index)
                _settle(qtbot, window)
            _assert_readable(window, f"grader {record.key}" + (f", page {sections.tabText(index)}"
                                                               if sections is not None else ""))
        assert window.width() <= SIZE[0] and window.height() <= SIZE[1]
    window.set_theme("dark")  # wider tabs and paddings: the designers still fit
    for key in ("answer-quality-1to5", "qa-correctness-judge", "rag-answer-checklist"):
        assert window.open_grader(key)
        sections = window.page.body.sections
        for index in range(sections.count()):
            sections.setCurrentIndex(index)
            _settle(qtbot, window)
            _assert_readable(window, f"dark grader {key}, page {sections.tabText(index)}")
    window.set_theme("light")
    window.page.discard()


def test_the_judge_designer_shows_three_examples_whole(qtbot: Any, demo_window: Any) -> None:
    window = demo_window
    for key in ("qa-correctness-judge", "answer-quality-1to5"):
        assert window.open_grader(key)
        body = window.page.body
        body.sections.setCurrentIndex(body.sections.indexOf(body.shots.parentWidget()))
        _settle(qtbot, window)
        table = body.shots.table
        assert rows_that_fit(table) >= 3, (key, table.viewport().height())
        _assert_readable(window, f"{key} examples")
        # the criteria page: the criteria box shows its lines, and the preview is beside it
        body.sections.setCurrentIndex(0)
        _settle(qtbot, window)
        criteria = body.criteria
        lines = criteria.document().size().height()  # laid-out lines of the demo's criteria
        assert criteria.viewport().height() >= criteria.fontMetrics().lineSpacing() * min(lines, 6), key
        assert body.preview.view.isVisible() and body.preview.view.height() >= 300
        assert body.preview.view.width() >= 380


def test_the_run_page_keeps_twelve_rows_beside_the_detail(qtbot: Any, demo_window: Any, ctx: Any) -> None:
    window = demo_window
    window.tabs.setCurrentIndex(TAB_RUN)
    panel = window.run_panel
    panel.open_run(ctx.library.runs.list()[0].id)
    results = panel.results
    qtbot.waitUntil(lambda: results.summary is not None and results.model.rowCount() > 0)
    results.select_row(1)
    _settle(qtbot, window)
    assert not panel.options.isVisible(), "the run form is compact once a run exists"
    assert results.detail.isVisible()
    assert visible_rows(results.table) >= 12, visible_rows(results.table)
    judge = results.detail.judge
    assert results.detail.tabs.currentWidget() is judge
    assert "confident and wrong" in judge.toPlainText()
    # the rationale's three lines are in view without scrolling the pane
    judge.verticalScrollBar().setValue(0)
    cursor = judge.document().find("confident and wrong")
    bottom = judge.cursorRect(cursor).bottom()
    assert 0 < bottom <= judge.viewport().height(), (bottom, judge.viewport().height())
    _assert_readable(window, "run and results")
    panel.options_button.setChecked(True)
    panel.history_button.setChecked(True)
    _settle(qtbot, window)
    _assert_readable(window, "run and results with the options and the runs list")
    assert visible_rows(results.table) >= 12
    panel.options_button.setChecked(False)
    panel.history_button.setChecked(False)

    window.tabs.setCurrentIndex(TAB_DATASETS)
    _settle(qtbot, window)
    _assert_readable(window, "datasets")
    window.tabs.setCurrentWidget(window.agreement_tab)
    view = window.agreement_view
    qtbot.waitUntil(lambda: view.report is not None and bool(view.report["disagreements"]), timeout=30_000)
    first = view.report["disagreements"][0]  # a note longer than the page is wide
    ctx.library.labels.put("qa", LabelInput(sample_id=first["sample_id"], verdict=first["human"],
                                            note="A long note. " * 30), "human", replace=True)  # a demo reviewer's
    view.report = None
    view.compute()
    qtbot.waitUntil(lambda: view.report is not None, timeout=30_000)
    _settle(qtbot, window)
    _assert_readable(window, "agreement")
    window.tabs.setCurrentWidget(window.compare_tab)
    _settle(qtbot, window)
    _assert_readable(window, "compare")
    window.tabs.setCurrentIndex(TAB_GRADER)


def test_the_empty_agreement_page_says_how_to_get_labels(qtbot: Any, window: Any, ctx: Any) -> None:
    window.resize(*SIZE)
    window.show()
    window.tabs.setCurrentWidget(window.agreement_tab)
    view = window.agreement_view
    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty_page)
    assert "No runs yet" in view.empty.text() and "press P" in view.empty.text()
    for button in (view.reload_button, view.align_button, view.import_button, view.label_button):
        assert not button.isEnabled(), button.text()

    build_demo(ctx.library)
    run = run_grader(ctx.library, "qa-token-f1", "qa", RunOptions())
    view.reload()
    view.show_run(run.id)
    view.key.setEditText("nobody-yet")
    view.compute()
    qtbot.waitUntil(lambda: view.report is not None and view.report["labels"] == "nobody-yet", timeout=30_000)
    assert view.stack.currentWidget() is view.empty_page and not view.confusion_plot.isVisible()
    assert "no human labels" in view.empty.text() and "import a labels file" in view.empty.text().lower()
    assert not view.align_button.isEnabled() and view.import_button.isEnabled()
    window.tabs.setCurrentIndex(TAB_GRADER)


def test_a_labels_file_imported_on_the_agreement_page_is_compared(qtbot: Any, window: Any, ctx: Any,
                                                                    tmp_path: Path) -> None:
    build_demo(ctx.library)
    run = run_grader(ctx.library, "qa-token-f1", "qa", RunOptions())
    window.tabs.setCurrentWidget(window.agreement_tab)
    view = window.agreement_view
    view.reload()
    view.show_run(run.id)
    view.key.setEditText("fresh")
    view.compute()
    qtbot.waitUntil(lambda: view.report is not None and view.report["labels"] == "fresh", timeout=30_000)
    ids = ctx.library.labels.sample_ids("qa")[:6]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({"sample_id": sid, "label": "PASS" if i % 2 else "FAIL"}) + "\n"
                            for i, sid in enumerate(ids)), encoding="utf-8")
    view.import_labels(str(path))
    qtbot.waitUntil(lambda: view.report is not None and view.report["n"] == 6, timeout=30_000)
    assert view.stack.currentWidget() is view.results_page and view.align_button.isEnabled()
    window.tabs.setCurrentIndex(TAB_GRADER)


def _screen_child(tmp_path: Path, width: int, height: int, saved: str | None) -> dict[str, Any]:
    config = tmp_path / f"screen-{width}x{height}.json"
    config.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": width, "height": height,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    args = [sys.executable, str(HERE / "screen_child.py"), str(tmp_path / "lib.sqlite"), str(tmp_path / "s.ini")]
    if saved:
        args.append(saved)
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_window_fits_the_screen_and_a_saved_one_only_if_it_fits(tmp_path: Path) -> None:
    laptop = _screen_child(tmp_path, 1280, 800, None)
    frame, area = QtCore.QRect(*laptop["frame"]), QtCore.QRect(*laptop["available"])
    assert area.contains(frame), laptop  # issue 24: it opened at 1440x900, off a 1280x800 screen
    assert frame.width() >= 1200 and frame.height() >= 740, "the first window uses the laptop's screen"
    big = _screen_child(tmp_path, 1920, 1080, "save")  # a geometry saved on a large monitor...
    assert QtCore.QRect(*big["frame"]).width() > 1280
    again = _screen_child(tmp_path, 1280, 800, "restore")  # ...gives way on the laptop
    assert QtCore.QRect(*again["available"]).contains(QtCore.QRect(*again["frame"])), again
    fits = _screen_child(tmp_path, 1920, 1080, "restore")  # and is kept where it fits
    assert fits["frame"][2:] == big["frame"][2:], (fits, big)


def test_the_checker_finds_cut_text_and_accepts_a_tooltip(qtbot: Any) -> None:
    """The clipping check itself: each kind of cut text is found, and a tooltip answers it."""
    root = QtWidgets.QWidget()
    qtbot.addWidget(root)
    layout = QtWidgets.QHBoxLayout(root)
    button = QtWidgets.QPushButton("A button with a long caption")
    label = QtWidgets.QLabel("A label with a long text that does not fit")
    edit = QtWidgets.QLineEdit(placeholderText="A placeholder far too long for the box")
    combo = QtWidgets.QComboBox()
    combo.addItem("An option with a long name")
    table = QtWidgets.QTableWidget(1, 1)
    table.setHorizontalHeaderLabels(["A header wider than its column"])
    table.setItem(0, 0, QtWidgets.QTableWidgetItem("A cell with more text than its column has room for"))
    table.horizontalHeader().resizeSection(0, 60)
    for widget in (button, label, edit, combo):
        widget.setFixedWidth(60)
        layout.addWidget(widget)
    layout.addWidget(table)
    root.resize(700, 200)
    root.show()
    qtbot.waitExposed(root)
    found = "\n".join(clipped_texts(root))
    for text in ("A button", "A label", "A placeholder", "An option", "header 'A header", "cell 'A cell"):
        assert text in found, (text, found)
    for widget in (button, label, edit, combo):
        widget.setToolTip("the whole text")
    table.item(0, 0).setToolTip("the whole text")
    table.horizontalHeaderItem(0).setToolTip("the whole title")
    assert clipped_texts(root) == []


def test_a_few_shot_example_opens_in_a_roomy_editor(qtbot: Any, demo_window: Any) -> None:
    window = demo_window
    assert window.open_grader("qa-correctness-judge")
    shots = window.page.body.shots
    before = shots.rows()[0]
    seen: dict[str, Any] = {}

    def edit() -> None:
        dialog = shots.dialog
        assert dialog is not None
        user, completion, reasoning, verdict = dialog.fields
        seen["size"] = (dialog.width(), dialog.height(), completion.height())
        seen["text"] = user.toPlainText()
        reasoning.setPlainText("A longer reasoning.\nOn two lines.")
        verdict.setCurrentText("FAIL")
        dialog.accept()

    QtCore.QTimer.singleShot(0, edit)
    with qtbot.waitSignal(window.page.body.changed):
        assert shots.edit_row(0)
    assert seen["text"] == before[0] and seen["size"][0] >= 600 and seen["size"][2] >= 90
    after = shots.rows()[0]
    assert after[2] == "A longer reasoning.\nOn two lines." and after[3] == "FAIL" and after[:2] == before[:2]
    assert shots.table.item(0, 2).toolTip() == after[2]  # the cell's tooltip is the whole text
    assert window.page.save_button.isEnabled()
    window.page.discard()


def test_the_try_panel_folds_away_and_comes_back_for_try(qtbot: Any, demo_window: Any, ctx: Any) -> None:
    window = demo_window
    assert window.open_grader("answer-quality-1to5")
    page = window.page
    _settle(qtbot, window)
    body_before = page.body_holder.height()
    page.set_bottom_collapsed(True)
    _settle(qtbot, window)
    assert page.bottom.height() <= page.bottom.tabBar().sizeHint().height() + 4
    assert page.body_holder.height() > body_before + 100, "the designer gets the panel's height"
    assert str(ctx.settings.value("editor/bottom_collapsed")).lower() == "true"  # remembered
    page.try_panel.picker.select("qa", 0)
    page.try_sample()  # Try unfolds the panel to show what it did
    _settle(qtbot, window)
    assert not page.bottom_collapsed and page.bottom.height() > 120
    qtbot.waitUntil(lambda: page.try_panel.button.isEnabled(), timeout=30_000)
