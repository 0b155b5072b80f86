"""Suites in the window: the suite editor (create from graders, reorder, weights and thresholds,
refusals as one sentence, lock), the run page's picker, and a suite run's grid (a score column per
grader beside the overall, sortable, a per-grader pass/fail filter) and detail pane (judges first)."""

from __future__ import annotations

from typing import Any

import pytest

from studio.core.engine.runner import run_grader
from studio.core.models import BuiltinGrader, Sample, Turn
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.ui.qt import QtCore
from studio.ui.results import ResultsView
from studio.ui.results.columns import COLUMN_INDEX, COLUMNS
from studio.ui.results.detail import judge_html
from studio.ui.suites.page import SuitesPage
from studio.ui.suites.picker import add_one_off, one_off_keys

WAIT_MS = 20_000


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(BuiltinGrader(key="has", function="contains"))
    samples = [Sample(id=f"s{i}", messages=[Turn(role="user", content="capital?")],
                      completion=["Paris", "It is Paris", "Lyon", "Paris!"][i % 4], expected="Paris")
               for i in range(12)]
    library.datasets.create("geo", samples)
    return library


def test_the_editor_makes_a_suite_and_refuses_bad_input_with_one_sentence(qtbot, app_ctx, lib: Library) -> None:  # type: ignore[no-untyped-def]
    page = SuitesPage(app_ctx)
    qtbot.addWidget(page)
    page.new_from(["exact", "has"])
    page.key.setText("geo-suite")
    page.table.item(1, 2).setText("heavy")
    assert not page.save()
    assert page.message.text() == "the weight of 'has' is not a number: 'heavy'" and lib.suites.list() == []
    page.table.item(1, 2).setText("2")
    page.table.item(0, 3).setText("1.5")
    assert not page.save()
    assert "outside its scores" in page.message.text() and lib.suites.list() == []
    page.table.item(0, 3).setText("1")
    page.table.setCurrentCell(1, 0)
    page._move(-1)  # "has" first now
    assert page.save(), page.message.text()
    record = lib.suites.get("geo-suite")
    assert [(m.grader, m.weight, m.threshold) for m in record.definition.graders] == [("has", 2.0, None),
                                                                                     ("exact", 1.0, 1.0)]
    assert record.definition.overall == "mean"
    page._toggle_lock()
    assert lib.suites.get("geo-suite").locked and not page.save_button.isEnabled()


def _score(cell: str) -> float:
    """The score of a compact suite cell ("✓ 0.83")."""
    return float(cell.split()[1])


def test_the_grid_shows_a_column_per_grader_sorts_and_filters_by_grader(qtbot, app_ctx, lib: Library) -> None:  # type: ignore[no-untyped-def]
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean",
                                      graders=[SuiteMember(grader="exact"), SuiteMember(grader="has")]))
    run = run_grader(lib, "geo-suite", "geo")
    view = ResultsView(app_ctx)
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    view.set_run(run.id)
    qtbot.waitUntil(lambda: not view.model.is_loading and view.model.rowCount() == 12, timeout=WAIT_MS)
    model = view.model
    titles = [model.headerData(i, QtCore.Qt.Orientation.Horizontal) for i in range(model.columnCount())]
    assert titles[len(COLUMNS):] == ["exact", "has"]
    header = view.table.horizontalHeader()
    # the overall score first, then a column per grader, then the sample and its status
    assert [header.logicalIndex(v) for v in range(5)] == [COLUMN_INDEX["score"], len(COLUMNS), len(COLUMNS) + 1,
                                                          COLUMN_INDEX["sample_id"], COLUMN_INDEX["status"]]
    assert model.headerData(len(COLUMNS), QtCore.Qt.Orientation.Horizontal, QtCore.Qt.ItemDataRole.ToolTipRole) \
        .startswith("exact: ✓ a pass at 0.5")
    exact_col = len(COLUMNS)
    alone = {key: [r["score"] for r in lib.runs.results(run_grader(lib, key, "geo").id)] for key in ("exact", "has")}
    cells = [model.data(model.index(r, exact_col)) for r in range(12)]
    # a compact cell: the pass/fail mark and the score, tinted by the verdict
    assert cells == [f"{'✓' if v >= 0.5 else '✗'} {v:.2f}" for v in alone["exact"]]
    assert [model.data(model.index(r, exact_col + 1)) for r in range(12)] == \
        [f"{'✓' if v >= 0.5 else '✗'} {v:.2f}" for v in alone["has"]]
    tints = {model.data(model.index(r, exact_col), QtCore.Qt.ItemDataRole.BackgroundRole).name() for r in range(12)}
    assert len(tints) == 2  # a pass's tint and a fail's
    assert model.data(model.index(0, exact_col), QtCore.Qt.ItemDataRole.ToolTipRole).startswith("exact: ")

    model.sort(exact_col, QtCore.Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: not model.is_loading and model.query.sort_key == "grader:exact", timeout=WAIT_MS)
    assert _score(model.data(model.index(0, exact_col))) == max(alone["exact"])

    # "exact fails but has passes": two conditions (two clicks in the header menus)
    view.suite_grid.set_condition("exact", "fail")
    view.suite_grid.set_condition("has", "pass")
    qtbot.waitUntil(lambda: not model.is_loading and model.query.filter.graders != (), timeout=WAIT_MS)
    wanted = sum(1 for e, h in zip(alone["exact"], alone["has"], strict=True) if e < 0.5 <= h)
    assert wanted > 0
    qtbot.waitUntil(lambda: model.rowCount() == wanted, timeout=WAIT_MS)
    for r in range(model.rowCount()):
        assert _score(model.data(model.index(r, exact_col))) < 0.5 <= _score(model.data(model.index(r, exact_col + 1)))
    app_ctx.tasks.wait_idle()


def test_the_column_chooser_hides_a_grader_and_remembers_it(qtbot, app_ctx, lib: Library) -> None:  # type: ignore[no-untyped-def]
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean",
                                      graders=[SuiteMember(grader="exact"), SuiteMember(grader="has")]))
    run = run_grader(lib, "geo-suite", "geo")

    def open_view() -> ResultsView:
        view = ResultsView(app_ctx)
        qtbot.addWidget(view)
        view.resize(1000, 700)
        view.show()
        view.set_run(run.id)
        qtbot.waitUntil(lambda: not view.model.is_loading and view.model.rowCount() == 12, timeout=WAIT_MS)
        return view

    view = open_view()
    header = view.table.horizontalHeader()
    # a suite's grid leaves the input and completion to the detail pane: they wait in the chooser
    assert header.isSectionHidden(COLUMN_INDEX["input"]) and not header.isSectionHidden(COLUMN_INDEX["sample_id"])
    menu = view.suite_grid.menu_for(len(COLUMNS), view.table)  # right-click on the "exact" header
    texts = [a.text() for a in menu.actions()]
    assert texts[0].startswith("Passes only (exact") and "Columns" in texts
    chooser = next(a.menu() for a in menu.actions() if a.text() == "Columns")
    entries = {a.text(): a for a in chooser.actions()}
    assert list(entries)[:3] == ["Overall", "exact", "has"]  # in the order the grid shows them
    entries["exact"].setChecked(False)
    entries["Input"].setChecked(True)
    assert header.isSectionHidden(len(COLUMNS)) and not header.isSectionHidden(COLUMN_INDEX["input"])
    again = open_view()  # another view (another session's) keeps the choice
    again_header = again.table.horizontalHeader()
    assert again_header.isSectionHidden(len(COLUMNS)) and not again_header.isSectionHidden(COLUMN_INDEX["input"])
    assert not again_header.isSectionHidden(len(COLUMNS) + 1)
    app_ctx.tasks.wait_idle()


def test_the_detail_pane_shows_every_grader_judges_first() -> None:
    result: dict[str, Any] = {"status": "ok", "score": 0.5, "graders": [
        {"grader": "exact", "version": 1, "status": "ok", "score": 1.0, "details": {}, "rationale": None},
        {"grader": "judge", "version": 3, "status": "ok", "score": 0.0, "details": {},
         "rationale": "<b>wrong</b> city"},
    ]}
    text = judge_html(result)
    assert text.index("judge v3") < text.index("exact v1")  # the judge's rationale is read first
    assert "&lt;b&gt;wrong&lt;/b&gt; city" in text  # plain text, escaped


def test_the_run_picker_offers_suites_and_several_graders(qtbot, app_ctx, lib: Library) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.runs.panel import RunPanel

    lib.suites.create(SuiteDefinition(key="geo-suite", graders=[SuiteMember(grader="exact")]))
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.reload_choices()
    assert panel.grader.findData("geo-suite") >= 0
    add_one_off(panel.grader, ["exact", "has"])
    assert one_off_keys(panel.grader.currentData()) == ["exact", "has"]
    assert panel.version.count() == 1  # a one-off suite runs the graders' current versions


def test_compare_and_agreement_tabs_pick_a_grader_of_suite_runs(qtbot, app_ctx, lib: Library) -> None:  # type: ignore[no-untyped-def]
    from studio.ui.agreement.compare import CompareView

    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean",
                                      graders=[SuiteMember(grader="exact"), SuiteMember(grader="has")]))
    a = run_grader(lib, "geo-suite", "geo").id
    b = run_grader(lib, "exact", "geo").id
    view = CompareView(app_ctx)
    qtbot.addWidget(view)
    view.reload()
    view.run_a.setCurrentIndex(view.run_a.findData(a))
    view.run_b.setCurrentIndex(view.run_b.findData(b))
    view.grader.refresh(lib, [a, b])
    assert not view.grader.isHidden() and [view.grader.itemData(i) for i in range(view.grader.count())] == [None, "exact"]
    view.grader.setCurrentIndex(1)
    view.compute()
    qtbot.waitUntil(lambda: view.report is not None, timeout=WAIT_MS)
    assert view.report["grader"] == "exact" and view.report["mean_delta"] == 0.0 and view.report["n_common"] == 12
    app_ctx.tasks.wait_idle()


def test_the_library_makes_a_suite_of_the_selected_graders(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    lib = window.ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.graders.create(BuiltinGrader(key="has", function="contains"))
    window.ctx.graders_changed.emit()
    panel = window.library
    selection = panel.tree.selectionModel()
    indexes = []
    for key in ("exact", "has"):  # as a Ctrl-click on each would
        assert panel.select(key, emit=False)
        indexes.append(QtCore.QPersistentModelIndex(panel.tree.currentIndex()))
    for index in indexes:
        selection.select(QtCore.QModelIndex(index), selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
    assert sorted(panel.selected_keys()) == ["exact", "has"]
    panel.suite_requested.emit(panel.selected_keys())
    assert window.tabs.currentWidget() is window.suites_page
    page = window.suites_page
    assert sorted(page.table.item(r, 0).text() for r in range(page.table.rowCount())) == ["exact", "has"]
    page.key.setText("picked")
    assert page.save(), page.message.text()
    assert lib.suites.get("picked").definition.overall == "mean"


def test_the_agreement_page_of_a_suite_run_names_the_grader_it_shows(qtbot, app_ctx, lib: Library) -> None:  # type: ignore[no-untyped-def]
    from studio.core.models.labels import LabelInput
    from studio.ui.agreement import AgreementView

    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean",
                                      graders=[SuiteMember(grader="exact"), SuiteMember(grader="has")]))
    ids = lib.labels.sample_ids("geo")
    lib.labels.put_many("geo", [LabelInput(sample_id=sid, verdict="PASS" if i % 3 else "FAIL")
                                for i, sid in enumerate(ids)])
    run = run_grader(lib, "geo-suite", "geo").id
    view = AgreementView(app_ctx)
    qtbot.addWidget(view)
    view.show()
    view.reload()
    view.show_run(run)
    qtbot.waitUntil(lambda: view.report is not None and view.report["run_id"] == run, timeout=WAIT_MS)
    assert "Showing the suite's <b>overall score</b>" in view.summary.text()
    view.grader.setCurrentIndex(view.grader.findData("has"))
    view.report = None
    view.compute()
    qtbot.waitUntil(lambda: view.report is not None and view.report["grader"] == "has", timeout=WAIT_MS)
    text = view.summary.text()
    assert "Showing <b>has</b>, one grader of the suite" in text
    # an interval to three decimals, like the value it bounds
    low, high = view.report["kappa_ci"]
    assert f"[{low:.3f}, {high:.3f}]" in text
    assert "best " in view.sweep_plot.getPlotItem().titleLabel.text
    best = view.report["best_threshold"]
    assert f"best {best:.3f}" in view.sweep_plot.getPlotItem().titleLabel.text
    # κ reads 0–1 on its axis, not 0–1000 (pyqtgraph's SI prefix on a unitless axis)
    assert all(plot.getAxis(side).autoSIPrefixScale == 1.0 for side in ("left", "bottom")
               for plot in (view.sweep_plot, view.scatter_plot))
    app_ctx.tasks.wait_idle()
