"""Labelling from the results grid by keyboard (pytest-qt, offscreen): P/F/N, digits, a note,
U for the next unlabelled sample; the Label column and the label filters follow."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from studio.core.engine.runner import start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BuiltinGrader, Outcome, Sample
from studio.core.store import Library
from studio.ui.context import AppContext
from studio.ui.qt import QtCore
from studio.ui.results import ResultFilter, ResultsView
from studio.ui.results.columns import COLUMN_INDEX

Key = QtCore.Qt.Key


@pytest.fixture
def view(qtbot, qapp, library: Library, db_path) -> Iterator[ResultsView]:  # type: ignore[no-untyped-def]
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    library.datasets.create("d", [Sample(id=f"s{i}", completion=str(i)) for i in range(6)])
    run = start_run(library, "g", "d")
    library.runs.write_results(run.id, [(i, f"s{i}", Outcome.scored(1.0 if i % 2 else 0.0, {}))
                                        for i in range(6)])
    library.runs.set_status(run.id, "completed", aggregates=run_aggregates(library, run.id))
    ctx = AppContext(library, db_path)
    widget = ResultsView(ctx)
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    widget.set_run(run.id)
    qtbot.waitUntil(lambda: not widget.model.is_loading and widget.model.rowCount() == 6, timeout=20_000)
    widget.select_row(0)
    widget.table.setFocus()
    yield widget
    ctx.tasks.wait_idle()


def label_cells(view: ResultsView) -> list[str]:
    column = COLUMN_INDEX["label"]
    return [view.model.data(view.model.index(r, column)) for r in range(view.model.rowCount())]


def test_keys_label_the_selected_sample_and_move_on(qtbot, view: ResultsView) -> None:  # type: ignore[no-untyped-def]
    library = view.ctx.library
    qtbot.keyClick(view.table, Key.Key_P)          # s0 PASS, moves to s1
    qtbot.keyClick(view.table, Key.Key_F)          # s1 FAIL, moves to s2
    qtbot.keyClick(view.table, Key.Key_4)          # s2 score 4, moves to s3
    assert view.table.currentIndex().row() == 3
    current = library.labels.current("d")
    assert (current["s0"].verdict, current["s1"].verdict, current["s2"].score) == ("PASS", "FAIL", 4.0)
    assert label_cells(view)[:4] == ["PASS", "FAIL", "4", ""]
    # a note travels with the label; changing a label keeps the old version
    view.select_row(0)
    qtbot.keyClicks(view.labeler.note, "short but right")
    view.table.setFocus()
    qtbot.keyClick(view.table, Key.Key_N)
    history = library.labels.history("d", "s0")
    assert [(h.verdict, h.note) for h in history] == [("PASS", ""), ("NA", "short but right")]
    # typing a note does not label: the letters go into the field
    view.select_row(5)
    view.labeler.note.setFocus()
    qtbot.keyClicks(view.labeler.note, "pf")
    assert "s5" not in library.labels.current("d") and view.labeler.note.text().endswith("pf")


def test_next_unlabelled_and_the_label_filters(qtbot, view: ResultsView) -> None:  # type: ignore[no-untyped-def]
    qtbot.keyClick(view.table, Key.Key_P)  # s0 PASS (judge FAIL: a disagreement)
    qtbot.keyClick(view.table, Key.Key_P)  # s1 PASS (judge PASS)
    view.select_row(0)
    qtbot.keyClick(view.table, Key.Key_U)
    assert view.table.currentIndex().row() == 2
    view.set_filter(ResultFilter(labels="disagreements"))
    qtbot.waitUntil(lambda: not view.model.is_loading and view.model.rowCount() == 1, timeout=20_000)
    assert view.model.data(view.model.index(0, COLUMN_INDEX["sample_id"])) == "s0"
    view.set_filter(ResultFilter(labels="unlabelled"))
    qtbot.waitUntil(lambda: not view.model.is_loading and view.model.rowCount() == 4, timeout=20_000)


def test_the_grid_shows_the_unstable_samples_of_a_repeat_group(qtbot, view: ResultsView) -> None:  # type: ignore[no-untyped-def]
    from studio.core.engine.runner import RunOptions

    library = view.ctx.library
    first = start_run(library, "g", "d", RunOptions(use_cache=False, repeat_index=1))
    second = start_run(library, "g", "d", RunOptions(use_cache=False, repeat_index=2, repeat_of=first.id))
    for run, flip in ((first, None), (second, 4)):
        library.runs.write_results(run.id, [(i, f"s{i}", Outcome.scored(
            (1.0 if i % 2 else 0.0) if i != flip else 1.0, {})) for i in range(6)])
        library.runs.set_status(run.id, "completed", aggregates=run_aggregates(library, run.id))
    view.set_run(second.id)
    assert view.filters.repeat_runs == (first.id, second.id)
    view.set_filter(ResultFilter(labels="unstable"))
    qtbot.waitUntil(lambda: not view.model.is_loading and view.model.rowCount() == 1, timeout=20_000)
    assert view.model.data(view.model.index(0, COLUMN_INDEX["sample_id"])) == "s4"
