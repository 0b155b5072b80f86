"""Review ▸ New queue… (pytest-qt): the dialog creates a queue by each rule through the engine's
``create_queue`` (the samples are the ones ``choose`` picks, as the CLI's would be), off the GUI
thread, shows only the fields the rule needs, and the new queue opens in the page; a refusal is the
engine's sentence in the dialog, and nothing is created."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from studio.core.engine.queues import QueueRule, choose
from studio.core.engine.runner import RunOptions, run_grader, start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BinaryJudge, BuiltinGrader, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.ui.qt import Qt

N = 8


def _judged(library: Library, scores: list[float]) -> int:
    run = start_run(library, "j", "d", RunOptions())
    library.runs.write_results(run.id, [
        (i, f"s{i}", Outcome.scored(s, {}, rationale=f"score {s}")) for i, s in enumerate(scores)])
    library.runs.set_status(run.id, "completed", aggregates=run_aggregates(library, run.id))
    return run.id


@pytest.fixture
def runs(ctx: Any) -> Iterator[dict[str, int]]:
    library = ctx.library
    listener = socket.create_server(("127.0.0.1", 0))  # a run's preflight connects; nothing is asked
    library.endpoints.save(EndpointConfig(name="judge", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
                                          model="m"))
    library.graders.create(BinaryJudge(key="j", criteria="Is the capital right?", endpoint="judge"))
    library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"Capital? {i}")],
                                         completion="Paris") for i in range(N)])
    a = _judged(library, [1.0, 0.0, 0.45, 1.0, 0.0, 0.55, 1.0, 0.0])
    b = _judged(library, [1.0, 1.0, 0.45, 0.0, 0.0, 0.55, 1.0, 1.0])
    answers = ["Paris", "Paris, surely", "Lyon", "It is Paris"]
    library.datasets.create("geo", [Sample(id=f"g{i}", messages=[Turn(role="user", content="Capital of France?")],
                                           completion=text, expected="Paris") for i, text in enumerate(answers)])
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(BuiltinGrader(key="contains", function="contains"))
    library.suites.create(SuiteDefinition(key="geo-suite", graders=[SuiteMember(grader="exact"),
                                                                    SuiteMember(grader="contains")]))
    suite = run_grader(library, "geo-suite", "geo").id
    yield {"a": a, "b": b, "suite": suite}
    listener.close()


@pytest.fixture
def page(qtbot: Any, ctx: Any, messages: Any, runs: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> Any:
    from studio.ui.review import ReviewPage

    monkeypatch.setenv("GRADER_STUDIO_USER", "lea")
    view = ReviewPage(ctx, messages=messages)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    ctx.tasks.settle()
    return view


def _open(page: Any, ctx: Any, qtbot: Any) -> Any:
    qtbot.mouseClick(page.new_button, Qt.MouseButton.LeftButton)
    dialog = page.findChild(__import__("studio.ui.review.new_queue", fromlist=["x"]).NewQueueDialog)
    assert dialog is not None and dialog.isVisible()
    ctx.tasks.settle()
    return dialog


def _tick(dialog: Any, dataset: str, run_ids: list[int]) -> None:
    dialog.dataset.setCurrentText(dataset)
    for i in range(dialog.runs.count()):
        item = dialog.runs.item(i)
        wanted = item.data(Qt.ItemDataRole.UserRole) in run_ids
        item.setCheckState(Qt.CheckState.Checked if wanted else Qt.CheckState.Unchecked)


def _rule(dialog: Any, label_start: str) -> None:
    index = next(i for i in range(dialog.rule.count()) if dialog.rule.itemText(i).startswith(label_start))
    dialog.rule.setCurrentIndex(index)


def _visible(dialog: Any) -> set[str]:
    return {key for key, widget in dialog.fields.items() if not widget.isHidden()}


CASES = [
    ("Random", "d", ["a"], {"n": 3, "seed": 5}, QueueRule(rule="random", n=3, seed=5), {"n", "seed"}),
    ("Disagreements between two runs", "d", ["a", "b"], {}, QueueRule(rule="disagreements"), set()),
    ("Disagreements between two graders", "geo", ["suite"], {"graders": ("exact", "contains")},
     QueueRule(rule="disagreements", graders=["exact", "contains"]), {"graders"}),
    ("Low-confidence", "d", ["a"], {"margin": 0.1}, QueueRule(rule="low_confidence", margin=0.1), {"margin"}),
    ("Everything the judge failed", "d", ["a", "b"], {}, QueueRule(rule="failed"), set()),
]


@pytest.mark.parametrize(("rule_label", "dataset", "run_names", "fields", "rule", "shown"), CASES,
                         ids=[c[0] for c in CASES])
def test_a_queue_by_each_rule_from_the_window(page: Any, ctx: Any, qtbot: Any, runs: dict[str, int],
                                              rule_label: str, dataset: str, run_names: list[str],
                                              fields: dict[str, Any], rule: QueueRule, shown: set[str]) -> None:
    dialog = _open(page, ctx, qtbot)
    run_ids = [runs[n] for n in run_names]
    dialog.name.setText("team-q")
    _tick(dialog, dataset, run_ids)
    _rule(dialog, rule_label)
    assert _visible(dialog) == shown  # only the fields the rule needs
    if "n" in fields:
        dialog.n.setValue(fields["n"])
        dialog.seed.setValue(fields["seed"])
    if "margin" in fields:
        dialog.margin.setValue(fields["margin"])
    if "graders" in fields:
        assert [dialog.grader_a.itemText(i) for i in range(dialog.grader_a.count())] == ["exact", "contains"]
        dialog.grader_a.setCurrentText(fields["graders"][0])
        dialog.grader_b.setCurrentText(fields["graders"][1])
    dialog.named.setChecked(True)
    dialog.reviewers.setText("ann, bob")
    dialog.labels_wanted.setValue(2)
    dialog.leads.setText("lea")
    with qtbot.waitSignal(dialog.created):
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
        ctx.tasks.settle()
    ctx.tasks.settle()
    queue = ctx.library.queues.get("team-q")
    expected = choose(ctx.library, run_ids, rule)
    assert expected, "each case's rule chooses some samples"
    assert ctx.library.queues.samples("team-q") == expected
    assert queue.runs == run_ids and queue.rule == rule.model_dump(exclude_none=True)
    assert queue.assignees == ["ann", "bob"] and queue.labels_wanted == 2 and queue.leads == ["lea"]
    assert page.queues.currentText() == "team-q" and page.queue is not None and page.queue.name == "team-q"
    assert [row[0] for row in page.model.rows] == [sid for sid, _ in expected]


def test_a_refusal_is_a_sentence_and_creates_nothing(page: Any, ctx: Any, qtbot: Any, runs: dict[str, int]) -> None:
    dialog = _open(page, ctx, qtbot)
    dialog.name.setText("one-run")
    _tick(dialog, "d", [runs["a"]])
    _rule(dialog, "Disagreements between two runs")
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    ctx.tasks.settle()
    assert "disagreements compare two runs" in dialog.status.text()
    assert "Traceback" not in dialog.status.text()
    assert dialog.status.textFormat() == Qt.TextFormat.PlainText
    assert dialog.isVisible() and dialog.create_button.isEnabled()
    assert ctx.library.queues.list() == []
    dialog.name.clear()
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert dialog.status.text() == "Give the queue a name."
