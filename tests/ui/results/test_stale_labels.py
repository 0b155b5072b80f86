"""A label names what it labels (issue 43): the label bar shows the run, sample and label set a key
press writes to, a key press or click writes there only while that sample is the one shown (a new
run, another run, a cleared or moved selection, a filter that hides it leave nothing to label), and
a label that replaces another person's, or one changed since it was shown, is asked for first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from studio.core.engine.runner import RunOptions, start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BuiltinGrader, Outcome, Sample
from studio.core.models.labels import LabelInput
from studio.core.store import Library
from studio.ui.context import AppContext
from studio.ui.qt import QtCore
from studio.ui.results import ResultFilter, ResultsView
from studio.ui.results.columns import COLUMN_INDEX

Key = QtCore.Qt.Key


def _finished_run(library: Library, dataset: str) -> int:
    run = start_run(library, "g", dataset, RunOptions(use_cache=False))
    library.runs.write_results(run.id, [(i, f"s{i}", Outcome.scored(1.0 if i % 2 else 0.0, {})) for i in range(6)])
    library.runs.set_status(run.id, "completed", aggregates=run_aggregates(library, run.id))
    return run.id


@pytest.fixture
def view(qtbot: Any, qapp: Any, library: Library, db_path: Any, messages: Any,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[ResultsView]:
    """Run A on dataset d, its s2 labelled FAIL by ben (the demo's second reviewer), s2 selected;
    the analyst at the window is "me"."""
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    for name in ("d", "d2"):  # d2: another dataset with the same sample ids
        library.datasets.create(name, [Sample(id=f"s{i}", completion=str(i)) for i in range(6)])
    run_a = _finished_run(library, "d")
    library.labels.put("d", LabelInput(sample_id="s2", verdict="FAIL", labeler="ben"))
    monkeypatch.setenv("GRADER_STUDIO_USER", "me")
    ctx = AppContext(library, db_path)
    widget = ResultsView(ctx)
    widget.labeler.messages = messages  # asks are recorded, answered by messages.confirm_answer
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    widget.set_run(run_a)
    _loaded(qtbot, widget)
    widget.select_row(2)
    widget.table.setFocus()
    yield widget
    ctx.tasks.wait_idle()


def _loaded(qtbot: Any, view: ResultsView, rows: int = 6) -> None:
    qtbot.waitUntil(lambda: not view.model.is_loading and view.model.rowCount() == rows, timeout=20_000)


def _bens_label_stands(library: Library) -> None:
    assert [(h.verdict, h.labeler) for h in library.labels.history("d", "s2")] == [("FAIL", "ben")]


def _press_everything(qtbot: Any, view: ResultsView) -> None:
    """Every way the bar writes: the keys on the grid, the buttons, Return in the note."""
    for key in (Key.Key_P, Key.Key_F, Key.Key_N, Key.Key_7):
        view.table.setFocus()
        qtbot.keyClick(view.table, key)
    _click_everything(view)


def _click_everything(view: ResultsView) -> None:
    """The buttons, Return in the note and the slot, without giving the grid the focus (which makes
    its first row current: a sample shown, that a key press would rightly label)."""
    for button in view.labeler.buttons.values():
        button.click()
    view.labeler.note.setText("stale")
    view.labeler.save_note()
    view.labeler.set_verdict("PASS")  # the slot itself, as a stray signal would call it


def _nothing_labelled(library: Library, messages: Any) -> None:
    _bens_label_stands(library)
    assert library.labels.current("d").keys() == {"s2"}
    assert library.labels.current("d2") == {}
    assert messages.asked == []  # nothing was even offered


def test_the_bar_names_the_run_sample_set_and_labeller(view: ResultsView) -> None:
    text = view.labeler.current.text()
    for part in (f"#{view.run_id}", "s2", "human", "FAIL", "ben"):
        assert part in text
    assert view.labeler.isEnabled()


def test_a_new_run_started_leaves_nothing_to_label(qtbot: Any, view: ResultsView, messages: Any) -> None:
    library = view.ctx.library
    run_b = start_run(library, "g", "d", RunOptions(use_cache=False))  # what the run panel's Run does
    view.set_run(run_b.id, live=True)
    _press_everything(qtbot, view)  # before the new run's rows arrive
    _nothing_labelled(library, messages)
    assert "s2" not in view.labeler.current.text() and f"#{run_b.id}" in view.labeler.current.text()
    assert not view.labeler.isEnabled()
    view.summary_bar.setFocus()  # away from the grid (which makes its first new row current)
    library.runs.write_results(run_b.id, [(i, f"s{i}", Outcome.scored(1.0, {})) for i in range(6)])
    view.refresh()
    _loaded(qtbot, view)
    assert view.labeler.target is None and "s2" not in view.labeler.current.text()
    _click_everything(view)  # and after, with none of its rows selected
    _nothing_labelled(library, messages)
    view.select_row(3)  # a sample of the new run, shown: labelled, and named so
    assert f"#{run_b.id} · s3" in view.labeler.current.text()
    qtbot.keyClick(view.table, Key.Key_P)
    assert library.labels.current("d")["s3"].labeler == "me"


def test_another_run_picked_leaves_nothing_to_label(qtbot: Any, view: ResultsView, messages: Any) -> None:
    library = view.ctx.library
    other = _finished_run(library, "d2")  # same sample ids, another dataset
    view.set_run(other)
    _press_everything(qtbot, view)
    _nothing_labelled(library, messages)
    _loaded(qtbot, view)
    assert "s2" not in view.labeler.current.text() and not view.labeler.isEnabled()
    _click_everything(view)
    _nothing_labelled(library, messages)
    # a sample picked there is labelled there, and the bar says so
    view.select_row(3)
    assert f"#{other}" in view.labeler.current.text() and "s3" in view.labeler.current.text()
    qtbot.keyClick(view.table, Key.Key_P)
    assert library.labels.current("d2")["s3"].verdict == "PASS" and "s3" not in library.labels.current("d")


def test_no_run_shown_leaves_nothing_to_label(qtbot: Any, view: ResultsView, messages: Any) -> None:
    view.set_run(None)
    _press_everything(qtbot, view)
    _nothing_labelled(view.ctx.library, messages)
    assert not view.labeler.isEnabled() and "s2" not in view.labeler.current.text()


def test_a_cleared_selection_leaves_nothing_to_label(qtbot: Any, view: ResultsView, messages: Any) -> None:
    view.table.selectionModel().clear()
    _press_everything(qtbot, view)
    _nothing_labelled(view.ctx.library, messages)
    assert not view.labeler.isEnabled() and "s2" not in view.labeler.current.text()


def test_a_filter_that_hides_the_sample_leaves_nothing_to_label(qtbot: Any, view: ResultsView,
                                                                messages: Any) -> None:
    view.set_filter(ResultFilter(labels="unlabelled"))  # s2 is labelled: it leaves the grid
    _loaded(qtbot, view, 5)
    _press_everything(qtbot, view)
    _nothing_labelled(view.ctx.library, messages)
    assert not view.labeler.isEnabled() and "s2" not in view.labeler.current.text()


def test_a_sort_keeps_the_sample_and_the_bar_on_it(qtbot: Any, view: ResultsView, messages: Any) -> None:
    view.sort_by("sample_id", descending=True)
    qtbot.waitUntil(lambda: not view.model.is_loading
                    and view.model.data(view.model.index(0, COLUMN_INDEX["sample_id"])) == "s5", timeout=20_000)
    row = view.table.currentIndex().row()
    assert view.model.data(view.model.index(row, COLUMN_INDEX["sample_id"])) == "s2"
    assert "s2" in view.labeler.current.text() and view.labeler.isEnabled()


def test_a_moved_selection_labels_the_new_sample_only(qtbot: Any, view: ResultsView, messages: Any) -> None:
    view.select_row(4)
    assert "s4" in view.labeler.current.text() and "s2" not in view.labeler.current.text()
    qtbot.keyClick(view.table, Key.Key_P)
    library = view.ctx.library
    _bens_label_stands(library)
    assert library.labels.current("d")["s4"].labeler == "me" and messages.asked == []


def test_another_label_set_is_named_and_labelled_there(qtbot: Any, view: ResultsView, messages: Any) -> None:
    view.labeler.key.setEditText("second")
    assert f"#{view.run_id} · s2 · second: unlabelled" in view.labeler.current.text()
    qtbot.keyClick(view.table, Key.Key_P)
    library = view.ctx.library
    assert library.labels.current("d", "second")["s2"].labeler == "me" and messages.asked == []
    _bens_label_stands(library)


@pytest.mark.parametrize("answer", [False, True])
def test_replacing_another_reviewers_label_is_asked_first(qtbot: Any, view: ResultsView, messages: Any,
                                                          answer: bool) -> None:
    library = view.ctx.library
    messages.confirm_answer = answer
    qtbot.keyClick(view.table, Key.Key_P)
    assert len(messages.questions) == 1
    title, text = messages.questions[0]
    for part in ("ben", "FAIL", "s2", f"#{view.run_id}", "PASS"):
        assert part in title + text
    history = library.labels.history("d", "s2")
    if answer:
        assert [(h.verdict, h.labeler) for h in history] == [("FAIL", "ben"), ("PASS", "me")]
        assert view.table.currentIndex().row() == 3  # moved on, as after any label
    else:
        _bens_label_stands(library)
        assert view.table.currentIndex().row() == 2 and "ben" in view.labeler.current.text()


def test_a_note_on_another_reviewers_label_is_asked_first(view: ResultsView, messages: Any) -> None:
    messages.confirm_answer = False
    view.labeler.note.setText("I disagree")
    view.labeler.save_note()
    assert len(messages.questions) == 1
    _bens_label_stands(view.ctx.library)


def test_correcting_ones_own_label_asks_nothing(qtbot: Any, view: ResultsView, messages: Any) -> None:
    view.select_row(3)
    qtbot.keyClick(view.table, Key.Key_P)
    view.select_row(3)
    qtbot.keyClick(view.table, Key.Key_F)
    assert messages.asked == []
    history = view.ctx.library.labels.history("d", "s3")
    assert [(h.verdict, h.labeler) for h in history] == [("PASS", "me"), ("FAIL", "me")]


@pytest.mark.parametrize("answer", [False, True])
def test_a_label_changed_since_it_was_shown_is_asked_first(qtbot: Any, view: ResultsView, messages: Any,
                                                           monkeypatch: pytest.MonkeyPatch, answer: bool) -> None:
    library = view.ctx.library
    view.select_row(4)  # unlabelled when shown
    assert "unlabelled" in view.labeler.current.text()
    monkeypatch.setenv("GRADER_STUDIO_USER", "ana")  # another reviewer, elsewhere, meanwhile
    library.labels.put("d", LabelInput(sample_id="s4", verdict="FAIL"))
    monkeypatch.setenv("GRADER_STUDIO_USER", "me")
    messages.confirm_answer = answer
    qtbot.keyClick(view.table, Key.Key_P)
    assert len(messages.questions) == 1 and "ana" in messages.questions[0][1]
    history = [(h.verdict, h.labeler) for h in library.labels.history("d", "s4")]
    assert history == ([("FAIL", "ana"), ("PASS", "me")] if answer else [("FAIL", "ana")])


def test_the_demo_reviewers_label_survives_a_stale_click_in_the_window(qtbot: Any, window: Any, ctx: Any,
                                                                      messages: Any) -> None:
    """What the new user did: the demo, the Run page, ben's qa-002 selected, another run picked in the
    runs list, PASS clicked. Nothing is written; picked again and clicked, it is asked and declined;
    the agreement report is the same throughout."""
    from studio.core.demo import build_demo
    from studio.core.engine.agreement import agreement
    from studio.core.engine.runner import run_grader
    from studio.ui.main_window import TAB_RUN

    build_demo(ctx.library)
    first = run_grader(ctx.library, "qa-token-f1", "qa", RunOptions()).id
    second = run_grader(ctx.library, "qa-exact-builtin", "qa", RunOptions()).id
    before = ctx.library.labels.history("qa", "qa-002")
    assert [(h.verdict, h.labeler) for h in before] == [("FAIL", "ben")]
    report = agreement(ctx.library, first)
    ctx.runs_changed.emit()
    window.tabs.setCurrentIndex(TAB_RUN)
    panel, results = window.run_panel, window.run_panel.results
    panel.open_run(first)
    qtbot.waitUntil(lambda: not results.model.is_loading and results.model.rowCount() == 60, timeout=30_000)
    results.select_row(1)
    assert "qa-002" in results.labeler.current.text() and "ben" in results.labeler.current.text()
    qtbot.waitUntil(lambda: panel.runs.row_of(second) is not None, timeout=30_000)
    panel.runs_view.selectRow(panel.runs.row_of(second))  # another run picked
    assert results.run_id == second
    results.labeler.buttons["PASS"].click()
    qtbot.waitUntil(lambda: not results.model.is_loading and results.model.rowCount() == 60, timeout=30_000)
    results.labeler.buttons["PASS"].click()
    assert ctx.library.labels.history("qa", "qa-002") == before and messages.asked == []
    # the same sample, shown in this run: the bar names run, sample and ben; the click asks first
    messages.confirm_answer = False
    results.select_row(1)
    assert f"#{second} · qa-002 · human: FAIL (v1, ben)" in results.labeler.current.text()
    results.labeler.buttons["PASS"].click()
    assert messages.asked == ["Replace another person's label?"]
    assert ctx.library.labels.history("qa", "qa-002") == before
    assert agreement(ctx.library, first) == report


def test_a_yes_given_after_the_sample_went_away_writes_nothing(qtbot: Any, view: ResultsView, messages: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The question is modal, but the grid is not frozen under it (a live run's rows, a reset): a
    yes given once the sample is no longer shown labels nothing."""
    def agree_after_the_selection_moved(title: str, text: str, action: str = "OK") -> bool:
        messages.asked.append(title)
        view.select_row(4)
        return True

    monkeypatch.setattr(messages, "confirm", agree_after_the_selection_moved)
    qtbot.keyClick(view.table, Key.Key_P)
    assert messages.asked == ["Replace another person's label?"]
    library = view.ctx.library
    _bens_label_stands(library)
    assert set(library.labels.current("d")) == {"s2"}
    assert "s4" in view.labeler.current.text() and "nothing labelled" in view.labeler.current.text()


def test_a_broken_label_is_shown_broken_and_labelling_repairs_it(qtbot: Any, view: ResultsView) -> None:
    """A teammate's newest label of s2 with a verdict this studio does not know: the bar names it
    broken (with its author) instead of showing the older label, and a key press labels past it."""
    from sqlalchemy import text

    library = view.ctx.library
    with library.engine.begin() as conn:
        conn.execute(text("INSERT INTO labels (label_set_id, sample_id, version, verdict, note, labeler, created_at)"
                          " SELECT label_set_id, sample_id, 2, 'MAYBE', '', 'mallory', created_at FROM labels"))
    view.select_row(1)
    view.select_row(2)
    shown = view.labeler.current.text()
    assert "broken" in shown and "s2 v2" in shown and "mallory" in shown and "FAIL (v1, ben)" not in shown
    view.table.setFocus()
    qtbot.keyClick(view.table, Key.Key_P)
    qtbot.waitUntil(lambda: "s2" in library.labels.current("d"), timeout=10_000)
    label = library.labels.current("d")["s2"]
    assert (label.version, label.verdict, label.labeler) == (3, "PASS", "me") and library.labels.broken("d") == []


def test_the_broken_labels_are_listed_under_the_bar(qtbot: Any, view: ResultsView) -> None:
    """Every broken label of the run's label set is listed under the label bar (its id and what is
    wrong, its sentence with the author as tooltip), not only the one of the sample shown; labelling
    the sample again repairs it and empties the list."""
    from sqlalchemy import text

    library = view.ctx.library
    assert not view.labeler.broken.isVisibleTo(view)  # a healthy label set shows nothing
    with library.engine.begin() as conn:
        conn.execute(text("INSERT INTO labels (label_set_id, sample_id, version, verdict, note, labeler, created_at)"
                          " SELECT label_set_id, sample_id, 2, 'MAYBE', '', 'mallory', created_at FROM labels"))
    view.labeler.set_run(view.run_id)  # the run opened again (or the live view saw the labels change)
    listed = view.labeler.broken.list
    assert view.labeler.broken.isVisibleTo(view) and listed.count() == 1
    assert listed.item(0).text().startswith("s2 v2 — verdict:")
    assert "mallory" in listed.item(0).toolTip() and "label sample s2 again" in listed.item(0).toolTip()
    view.select_row(1)
    view.select_row(2)
    view.table.setFocus()
    qtbot.keyClick(view.table, Key.Key_P)
    qtbot.waitUntil(lambda: "s2" in library.labels.current("d"), timeout=10_000)
    assert listed.count() == 0 and not view.labeler.broken.isVisibleTo(view)
