"""The Review page (pytest-qt): a reviewer sees the thread and the grader's question, never the
judge's verdict or another reviewer's label until their own label is in (the store decides); P / F
/ N label by keyboard with the note, U moves on; progress per reviewer follows others' labels
(the live view); a lead computes agreement and sees pass rates as judged and as adjudicated."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from studio.core.engine.queues import QueueRule, create_queue
from studio.core.engine.runner import RunOptions, start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BinaryJudge, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.ui.qt import Qt

RATIONALE = "The judge thinks Lyon is wrong"


def _fill(library: Library, port: int) -> int:
    # results are written by hand; the endpoint only satisfies a run's preflight (a listening socket)
    library.endpoints.save(EndpointConfig(name="judge", base_url=f"http://127.0.0.1:{port}/v1", model="m"))
    library.graders.create(BinaryJudge(key="j", criteria="Is the capital right?", endpoint="judge"))
    library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"Capital of France? {i}")],
                                         completion="Lyon" if i % 2 else "Paris",
                                         metadata={"earlier_verdict": "judged incorrect"}) for i in range(6)])
    run = start_run(library, "j", "d", RunOptions())
    library.runs.write_results(run.id, [
        (i, f"s{i}", Outcome.scored(0.0 if i % 2 else 1.0, {}, details={"verdict": "FAIL" if i % 2 else "PASS"},
                                    rationale=RATIONALE if i % 2 else "fine")) for i in range(6)])
    library.runs.set_status(run.id, "completed", aggregates=run_aggregates(library, run.id))
    return run.id


@pytest.fixture
def page(qtbot: Any, ctx: Any, messages: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from studio.ui.review import ReviewPage

    listener = socket.create_server(("127.0.0.1", 0))
    run = _fill(ctx.library, listener.getsockname()[1])
    monkeypatch.setenv("GRADER_STUDIO_USER", "lea")
    create_queue(ctx.library, "q", [run], QueueRule(rule="failed"), labels_wanted=2, assignees=["ann", "bob"])
    ctx.library.queues.put_label("q", "s1", "PASS", "ann thinks so", reviewer="ann")
    monkeypatch.setenv("GRADER_STUDIO_USER", "bob")
    view = ReviewPage(ctx, messages=messages)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    ctx.tasks.settle()
    yield view
    listener.close()


def _texts(view: Any) -> str:
    cells = [view.side.item(r, c).text() for r in range(view.side.rowCount()) for c in range(3)
             if view.side.item(r, c) is not None]
    return " ".join(cells)


def test_blind_until_labelled_then_side_by_side(page: Any, ctx: Any, qtbot: Any) -> None:
    assert page.shown.sample_id == "s1"
    assert "Capital of France? 1" in page.thread_view.toPlainText() and "Lyon" in page.thread_view.toPlainText()
    assert page.question.text() == "The grader's question: Is the capital right?"
    assert page.reveal.currentWidget() is page.hidden and page.shown.item.judged is None
    assert RATIONALE not in page.thread_view.toPlainText() and "ann thinks so" not in _texts(page)
    assert "judged incorrect" not in page.thread_view.toPlainText()  # a row's metadata may carry a verdict
    assert "You (bob): 0 of 3 labelled · ann 1/3" in page.progress.text()
    page.note.setText("Lyon is not the capital")
    qtbot.keyClick(page.list, Qt.Key.Key_F)
    ctx.tasks.settle()
    assert page.reveal.currentWidget() is page.side
    shown = _texts(page)
    assert "ann thinks so" in shown and RATIONALE in shown and "Lyon is not the capital" in shown
    assert ctx.library.queues.labels("q")["s1"]["bob"].note == "Lyon is not the capital"
    assert "You (bob): 1 of 3 labelled" in page.progress.text()
    assert page.model.rows[0] == ("s1", page.model.rows[0][1], True)
    qtbot.keyClick(page.list, Qt.Key.Key_U)  # on to the next sample still wanting bob's label: blind again
    ctx.tasks.settle()
    assert page.shown.sample_id == "s3" and page.reveal.currentWidget() is page.hidden
    assert page.note.text() == ""
    assert not page.tabs.isTabEnabled(1)  # bob is no lead: no every-label-at-once view


def test_others_progress_shows_and_a_lead_reads_agreement(page: Any, ctx: Any, monkeypatch: pytest.MonkeyPatch,
                                                         messages: Any) -> None:
    ctx.library.queues.put_label("q", "s3", "FAIL", reviewer="ann")  # another reviewer, elsewhere
    page.refresh_progress()  # what the live view calls when the queue tables move
    ctx.tasks.settle()
    assert "ann 2/3" in page.progress.text()
    from studio.ui.review import ReviewPage

    monkeypatch.setenv("GRADER_STUDIO_USER", "lea")
    ctx.library.queues.settle("q", "s1", "PASS", "Lyon would be wrong, but the question allows it")
    lead = ReviewPage(ctx, messages=messages)
    ctx.tasks.settle()
    assert lead.tabs.isTabEnabled(1) and lead.settle_widgets.isVisibleTo(lead)
    lead.compute_agreement()
    ctx.tasks.settle()
    text = lead.report_text.toPlainText()
    assert "Judges against the humans" in text
    assert "pass rate as judged: 50.0%" in text and "pass rate as adjudicated: 66.7%" in text
    assert lead.disagreements.rowCount() >= 1
    lead.deleteLater()
