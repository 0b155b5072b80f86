"""Walk the window through its states on a screen of one size and fail on the first that grows it
past the screen's available geometry (issue 35). Run by ``test_window_states.py`` in a child process
whose offscreen platform has that screen (``QT_QPA_PLATFORM=offscreen:configfile=...``), with
``WALK_SCREEN=WIDTHxHEIGHT``; not collected on its own (its name is not ``test_*``).

The states: every page and every tab of every page; every demo grader (every kind) open, with each of
its designer's tabs and its bottom panel folded and unfolded; each dataset; the run page with its
options and runs list shown and hidden, after a single run, a suite run of five graders and a pairwise
run, each with a result selected; the Agreement and Compare pages on each of those runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from window_growth import explain

from studio.core.demo import DEMO_ENDPOINT, build_demo
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.graders.registry import kind_labels
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store.endpoints import EndpointRepository, demo_endpoint_config
from studio.ui.main_window import TAB_DATASETS, TAB_GRADER, TAB_RUN, MainWindow
from studio.ui.qt import QtCore, QtWidgets
from studio.ui.results.columns import COLUMN_INDEX, COLUMNS
from studio.ui.window_size import FRAME_GUESS

SUITE = SuiteDefinition(key="qa-five", name="Five QA checks", overall="mean", graders=[
    SuiteMember(grader="qa-exact-builtin", threshold=1.0), SuiteMember(grader="qa-token-f1"),
    SuiteMember(grader="qa-exact-match"), SuiteMember(grader="qa-contains-expected"),
    SuiteMember(grader="qa-correctness-judge", weight=2.0)])

#: ten graders that need no judge: the grid's widest suite (issue 35: 4–10 graders without scrolling)
TEN = SuiteDefinition(key="qa-ten", name="Ten QA checks", overall="mean", graders=[SuiteMember(grader=key) for key in (
    "qa-exact-builtin", "qa-token-f1", "qa-exact-match", "qa-contains-expected", "qa-keyword-coverage",
    "answer-not-empty", "no-refusal", "ascii-printable", "qa-token-f1-mka1", "qa-blended-score")])


def _screen() -> tuple[int, int]:
    width, height = os.environ["WALK_SCREEN"].lower().split("x")
    return int(width), int(height)


@pytest.fixture
def app_font(qapp: Any) -> Iterator[None]:
    """The font the studio runs with (``ui/app.py``: at least 10 pt)."""
    before = qapp.font()
    font = qapp.font()
    font.setPointSizeF(max(10.0, font.pointSizeF()))
    qapp.setFont(font)
    yield
    qapp.setFont(before)


@pytest.fixture
def judge() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer().start()
    yield server
    server.stop()


def _settle() -> None:
    for _ in range(4):
        QtWidgets.QApplication.processEvents()


def _check(window: MainWindow, state: str) -> None:
    _settle()
    area = window.screen().availableGeometry()
    frame = window.frameGeometry()
    # the frame a window manager adds (the offscreen platform's is thinner than a real one's)
    extra = (frame.size() - window.geometry().size()).expandedTo(QtCore.QSize(
        FRAME_GUESS.left() + FRAME_GUESS.right(), FRAME_GUESS.top() + FRAME_GUESS.bottom()))
    room_w, room_h = area.width() - extra.width(), area.height() - extra.height()
    room_w -= int(os.environ.get("WALK_SPARE", "0"))  # to look for what comes next to the edge
    hint = window.minimumSizeHint()
    if hint.width() > room_w or window.width() > room_w + int(os.environ.get("WALK_SPARE", "0")) or window.minimumWidth() > room_w:
        pytest.fail(f"{state}: the window is {window.width()} px wide (its minimum {hint.width()}) on a "
                    f"screen with {room_w} px: {explain(window, horizontal=True)}")
    if window.height() > room_h or hint.height() > room_h or window.minimumHeight() > room_h:
        pytest.fail(f"{state}: the window is {window.height()} px tall (its minimum {hint.height()}) on a "
                    f"screen with {room_h} px: {explain(window, horizontal=False)}")
    assert area.contains(frame), f"{state}: the window {frame} is off the screen {area}"
    print(f"{state}: minimum {hint.width()}x{hint.height()}")  # shown with -s, or when the walk fails


def _inner_tabs(window: MainWindow, state: str, top: QtWidgets.QWidget) -> None:
    """Every tab of every tab widget shown inside ``top`` (one level: a tab's own tabs too)."""
    seen: set[int] = set()
    for _ in range(3):
        found = [t for t in top.findChildren(QtWidgets.QTabWidget) if t.isVisible() and id(t) not in seen]
        if not found:
            return
        for tabs in found:
            seen.add(id(tabs))
            current = tabs.currentIndex()
            for index in range(tabs.count()):
                if not tabs.isTabVisible(index) or not tabs.isTabEnabled(index):
                    continue
                tabs.setCurrentIndex(index)
                _check(window, f"{state}, tab {tabs.tabText(index)!r}")
            tabs.setCurrentIndex(current)


def _wait_run(qtbot: Any, panel: Any) -> None:
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=120_000)
    results = panel.results
    qtbot.waitUntil(lambda: results.summary is not None and results.model.rowCount() > 0, timeout=30_000)


def _scores_in_view(results: Any, state: str) -> None:
    """A suite run's overall and grader columns all lie inside the grid, no sideways scrolling (issue 35)."""
    model, table = results.model, results.table
    header = table.horizontalHeader()
    assert table.horizontalScrollBar().value() == 0
    for logical in [COLUMN_INDEX["score"], *range(len(COLUMNS), len(model.columns))]:
        right = header.sectionViewportPosition(logical) + header.sectionSize(logical)
        assert not header.isSectionHidden(logical) and right <= table.viewport().width(), \
            f"{state}: the column {model.columns[logical].key} ends at {right} px, the grid shows {table.viewport().width()}"


def _run_states(qtbot: Any, window: MainWindow, state: str) -> None:
    """The run page after a run: a result selected, runs list and options shown and hidden."""
    panel = window.run_panel
    window.tabs.setCurrentIndex(TAB_RUN)
    panel.results.select_row(min(2, panel.results.model.rowCount() - 1))
    for history in (True, False):
        for options in (True, False):
            panel.history_button.setChecked(history)
            panel.options_button.setChecked(options)
            name = f"{state}: runs list {'shown' if history else 'hidden'}, options {'shown' if options else 'hidden'}"
            _check(window, name)
            # every score in view: with the runs list hidden (the default below 1300 px) up to ten
            # graders, beside the runs list up to five
            if panel.results.model.extra_columns and (not history or len(panel.results.model.extra_columns) <= 5):
                _scores_in_view(panel.results, name)
    run_id = panel.results.run_id
    window.tabs.setCurrentWidget(window.agreement_tab)
    view = window.agreement_view
    view.reload()
    view.show_run(run_id)
    window.ctx.tasks.wait_idle()  # the report computed; _check's events deliver it
    _check(window, f"{state}: Agreement page")
    _inner_tabs(window, f"{state}: Agreement page", window.agreement_tab)
    window.tabs.setCurrentWidget(window.compare_tab)
    window.compare_view.reload()
    window.compare_view.compare_latest(window.ctx.library.runs.get(run_id).grader_key or "")
    window.ctx.tasks.wait_idle()
    _check(window, f"{state}: Compare page")


def test_every_state_fits_the_screen(qtbot: Any, ctx: Any, messages: Any, app_font: None,
                                     judge: FakeJudgeServer) -> None:
    width, height = _screen()
    build_demo(ctx.library)
    EndpointRepository.of(ctx.library).save(demo_endpoint_config(DEMO_ENDPOINT, judge.port))
    ctx.library.suites.create(SUITE)
    ctx.library.suites.create(TEN)
    window = MainWindow(ctx, messages, check_sandbox=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    area = window.screen().availableGeometry()
    assert (area.width(), area.height()) == (width, height), "the offscreen screen is not the size asked for"
    try:
        _walk(qtbot, window, ctx)
    finally:
        ctx.tasks.wait_idle()
        window.run_panel.shutdown()
        messages.unsaved_answer = "discard"
        window.close()


def _walk(qtbot: Any, window: MainWindow, ctx: Any) -> None:
    _check(window, "the first window")
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        ctx.tasks.wait_idle()
        _check(window, f"page {window.tabs.tabText(index)!r}, no run yet")

    # every grader: each kind's editor, each tab of its designer, the bottom panel folded and not
    records = sorted(ctx.library.graders.list(), key=lambda r: r.key)
    assert {r.kind for r in records} == set(kind_labels()), "the demo no longer has a grader of every kind"
    for record in records:
        assert window.open_grader(record.key)
        ctx.tasks.wait_idle()
        state = f"grader {record.key} ({record.kind})"
        _check(window, state)
        _inner_tabs(window, state, window.grader_stack)
        window.page.set_bottom_collapsed(not window.page.bottom_collapsed)
        _check(window, state + ", bottom panel toggled")
        window.page.set_bottom_collapsed(not window.page.bottom_collapsed)
        window.page.discard()

    window.tabs.setCurrentIndex(TAB_DATASETS)
    view = window.datasets_view
    for record in ctx.library.datasets.list():
        view.select_dataset(record.name)
        view.select_sample(0)
        _check(window, f"dataset {record.name}")

    window.tabs.setCurrentWidget(window.suites_page)
    window.suites_page.reload(select=SUITE.key)
    _check(window, "Suites page, a suite open")

    panel = window.run_panel
    window.tabs.setCurrentIndex(TAB_RUN)
    for history in (True, False):
        panel.history_button.setChecked(history)
        _check(window, f"run page before a run, runs list {'shown' if history else 'hidden'}")

    runs = (("single run of a judge", "qa-correctness-judge", "qa"),
            ("suite run of five graders", SUITE.key, "qa"),
            ("suite run of ten graders", TEN.key, "qa"),
            ("pairwise run", "pairwise-preference", "qa-pairs"))
    for state, grader, dataset in runs:
        window.tabs.setCurrentIndex(TAB_RUN)
        panel.select(grader=grader, dataset=dataset)
        assert panel.grader.currentData() == grader and panel.dataset.currentData() == dataset
        assert panel.start() is not None, panel.message.text()
        _check(window, f"{state}, running")
        _wait_run(qtbot, panel)
        _check(window, state)
        _run_states(qtbot, window, state)

    # back to each page with every run behind it
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        ctx.tasks.wait_idle()
        _check(window, f"page {window.tabs.tabText(index)!r} after the runs")
    window.tabs.setCurrentIndex(TAB_GRADER)
