"""The agreement and compare views on stored runs (pytest-qt, offscreen): numbers, plots, a click
that opens a disagreement in the results, and "compare with previous run" from a grader's versions."""

from __future__ import annotations

import pytest

from studio.core.engine.runner import start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BuiltinGrader, Outcome, Sample
from studio.core.models.labels import LabelInput
from studio.core.store import Library
from studio.ui.agreement import AgreementView, CompareView
from studio.ui.context import AppContext

HUMAN = ["PASS", "FAIL", "PASS", "PASS", "FAIL", "PASS", "FAIL", "PASS"]


def _run(lib: Library, scores: list[float]) -> int:
    run = start_run(lib, "g", "d")
    lib.runs.write_results(run.id, [(i, f"s{i}", Outcome.scored(s, {}, rationale=f"r{i}"))
                                    for i, s in enumerate(scores)])
    lib.runs.set_status(run.id, "completed", aggregates=run_aggregates(lib, run.id))
    return run.id


@pytest.fixture
def ctx(qapp, library: Library, db_path):  # type: ignore[no-untyped-def]
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    library.datasets.create("d", [Sample(id=f"s{i}", completion=str(i)) for i in range(8)])
    library.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict=v) for i, v in enumerate(HUMAN)])
    context = AppContext(library, db_path)
    yield context
    context.tasks.wait_idle()


def test_agreement_view_shows_kappa_plots_and_opens_a_disagreement(qtbot, ctx) -> None:  # type: ignore[no-untyped-def]
    run_id = _run(ctx.library, [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    view = AgreementView(ctx)
    qtbot.addWidget(view)
    view.show()
    view.reload()
    qtbot.waitUntil(lambda: view.report is not None, timeout=20_000)
    assert view.report["run_id"] == run_id and view.report["n"] == 8
    assert "Cohen's κ" in view.summary.text()
    assert view.table.rowCount() == 2  # s1 (human FAIL, judge PASS), s3 (human PASS, judge FAIL)
    assert {view.table.item(r, 0).text() for r in range(2)} == {"s1", "s3"}
    assert view.confusion_plot.getPlotItem().items and view.sweep_plot.getPlotItem().items
    with qtbot.waitSignal(view.open_sample, timeout=5000) as opened:
        view.table.cellClicked.emit(0, 0)
    assert opened.args[0] == run_id and opened.args[1] in {"s1", "s3"}


def test_compare_view_with_previous_run(qtbot, ctx) -> None:  # type: ignore[no-untyped-def]
    _run(ctx.library, [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    _run(ctx.library, [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0])  # fixes both disagreements
    view = CompareView(ctx)
    qtbot.addWidget(view)
    view.show()
    assert view.compare_latest("g")
    qtbot.waitUntil(lambda: view.report is not None, timeout=20_000)
    assert view.report["n_common"] == 8 and len(view.report["flips"]) == 2
    assert view.table.rowCount() == 2 and "raises κ" in view.summary.text()


@pytest.mark.parametrize("answer", [False, True])
def test_importing_over_another_reviewers_labels_is_asked_first(qtbot, ctx, messages, tmp_path,  # type: ignore[no-untyped-def]
                                                               monkeypatch, answer: bool) -> None:
    """Issue 43: a labels file that would replace ben's labels is imported only once agreed to."""
    import json

    monkeypatch.setenv("GRADER_STUDIO_USER", "me")
    run_id = _run(ctx.library, [1.0] * 8)
    ctx.library.labels.put_many("d", [LabelInput(sample_id="s0", verdict="FAIL", labeler="ben")], key="second")
    view = AgreementView(ctx)
    view.messages = messages
    qtbot.addWidget(view)
    view.reload()
    view.show_run(run_id)
    view.key.setEditText("second")
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"sample_id": f"s{i}", "label": "PASS"}) + "\n" for i in range(3)))
    messages.confirm_answer = answer
    view.import_labels(str(path))
    qtbot.waitUntil(lambda: len(messages.questions) == 1, timeout=20_000)
    assert "'s0' (ben's FAIL, v1)" in messages.questions[0][1]
    expected = {"s0": "PASS", "s1": "PASS", "s2": "PASS"} if answer else {"s0": "FAIL"}
    qtbot.waitUntil(lambda: {s: lab.verdict for s, lab in ctx.library.labels.current("d", "second").items()}
                    == expected, timeout=20_000)
    assert [h.labeler for h in ctx.library.labels.history("d", "s0", "second")] == (["ben", "me"] if answer else ["ben"])
    if not answer:
        assert view.summary.text().startswith("Nothing imported")


def test_compare_a_suite_without_an_overall_score_shows_what_the_cli_prints(qtbot, ctx, cli) -> None:  # type: ignore[no-untyped-def]
    """A suite without an overall rule has no "Overall score": the tab starts on the first grader
    both runs have and states the n and Δ ``runs compare`` prints for it (one core function)."""
    import re

    from studio.core.engine.runner import run_grader
    from studio.core.models.suite import SuiteDefinition, SuiteMember

    lib = ctx.library
    lib.graders.create(BuiltinGrader(key="has", function="contains"))
    lib.datasets.create("answers", [Sample(id=f"a{i}", completion="Paris, France" if i % 3 else "Paris",
                                           expected="Paris") for i in range(12)])
    lib.suites.create(SuiteDefinition(key="both", graders=[SuiteMember(grader="g"), SuiteMember(grader="has")]))
    first = run_grader(lib, "both", "answers").id
    lib.graders.save(BuiltinGrader(key="g", function="contains"))  # v2: the suite follows it
    second = run_grader(lib, "both", "answers").id

    view = CompareView(ctx)
    qtbot.addWidget(view)
    view.show()
    view.compare_runs(first, second)
    qtbot.waitUntil(lambda: view.report is not None, timeout=20_000)
    offered = [view.grader.itemText(i) for i in range(view.grader.count())]
    assert "Overall score" not in offered and offered == ["g", "has"]
    assert view.report["grader"] == "g"

    shown = view.summary.text()
    printed = cli("runs", "compare", str(first), str(second))
    assert printed.returncode == 0, printed.stderr
    block = printed.stdout.split("grader has:")[0]
    n = re.search(r"n_common (\d+)", block)
    delta = re.search(r"delta (-?\d+\.\d+)", block)
    assert n and delta, printed.stdout
    assert int(n.group(1)) == 12 and float(delta.group(1)) != 0.0
    assert f"n_common {n.group(1)} ·" in shown and f"Δ {delta.group(1)}" in shown, shown
