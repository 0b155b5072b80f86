"""Run panel: run a builtin grader and a judge (against our scripted judge server), cancel, resume."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from namespaces_fallback import require_namespaces
from no_bwrap import path_without_bwrap
from run_helpers import math_samples, slow_child_command

from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    CriteriaJudge,
    Criterion,
    FunctionGrader,
    Sample,
    Turn,
)
from studio.core.store import Library
from studio.ui.qt import Qt
from studio.ui.results.columns import COLUMN_INDEX
from studio.ui.runs import RunPanel

WAIT_MS = 30_000


def make_panel(qtbot, app_ctx) -> RunPanel:  # type: ignore[no-untyped-def]
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.resize(1400, 900)
    panel.show()
    return panel


def test_run_a_builtin_grader_and_see_results(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(400))
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="exact", dataset="math")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        run_id = panel.start()
    info = finished.args[0]
    assert run_id is not None and info.id == run_id and info.status == "completed" and info.done == 400
    results = panel.results
    qtbot.waitUntil(lambda: results.model.rowCount() == 400 and not results.model.is_loading, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: results.summary is not None and results.summary.run.status == "completed",
                    timeout=WAIT_MS)
    assert "completed" in panel.message.text() and "400 of 400" in panel.message.text()
    assert "mean <b>0.7500</b>" in results.summary_bar.text.text()  # every 4th answer is wrong (4 places, as run prints it)
    assert results.model.data(results.model.index(1, COLUMN_INDEX["score"])) == "1.000"
    qtbot.waitUntil(lambda: panel.runs.row_of(run_id) is not None, timeout=WAIT_MS)
    assert panel.runs.run_at(panel.runs.row_of(run_id)).status == "completed"
    assert not panel.resume_button.isEnabled() and panel.start_button.isEnabled()


@pytest.fixture
def slow_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small batches with a pause each, so a cancel lands mid-run (in the run's child process)."""
    from studio.ui.runs import worker

    monkeypatch.setattr(worker, "child_command", slow_child_command)


def test_cancel_mid_run_keeps_the_window_responsive_then_resume(qtbot, app_ctx, slow_builtin) -> None:  # type: ignore[no-untyped-def]
    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(3000))
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="exact", dataset="math")
    run_id = panel.start()
    assert run_id is not None and panel.is_running() and panel.cancel_button.isEnabled()
    assert not panel.start_button.isEnabled() and not panel.grader.isEnabled()
    qtbot.waitUntil(lambda: panel.results.model.rowCount() >= 100, timeout=WAIT_MS)  # streaming in
    assert panel.progress_bar.value() > 0 and "/s" in panel.progress_label.text()
    with qtbot.waitSignal(panel.run_finished, timeout=10_000) as finished:
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        assert "Cancelling" in panel.cancel_button.text()
    info = finished.args[0]
    assert info.status == "cancelled" and 0 < info.done < 3000
    assert lib.runs.get(run_id).status == "cancelled"
    assert "cancelled" in panel.message.text() and not panel.is_running()

    # the cancelled run is resumable from the list, and finishes what is left
    qtbot.waitUntil(lambda: panel.runs.row_of(run_id) is not None
                    and panel.runs.run_at(panel.runs.row_of(run_id)).status == "cancelled", timeout=WAIT_MS)
    panel.open_run(run_id)
    assert panel.resume_button.isEnabled()
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    assert finished.args[0].status == "completed" and finished.args[0].done == 3000
    assert len(lib.runs.done_indices(run_id)) == 3000


@pytest.fixture
def fake_judge() -> Iterator[object]:
    from studio.core.demo.fake_server import FakeJudgeServer

    server = FakeJudgeServer().start()
    yield server
    server.stop()


def add_fake_endpoint(lib: Library, server) -> None:  # type: ignore[no-untyped-def]
    from studio.core.models.endpoints import EndpointConfig
    from studio.core.store.endpoints import EndpointRepository

    EndpointRepository.of(lib).save(EndpointConfig(
        name="fake", base_url=server.base_url, model="fake-judge", timeout=5.0, retry_backoff=0.01,
        max_concurrency=8, label="scripted judge"))


def test_binary_judge_run_shows_rationale_in_the_detail_pane(qtbot, app_ctx, fake_judge) -> None:  # type: ignore[no-untyped-def]
    lib: Library = app_ctx.library
    add_fake_endpoint(lib, fake_judge)
    app_ctx.endpoints_changed.emit()
    lib.graders.create(BinaryJudge(key="correct", criteria="The answer is correct.", endpoint="fake"))
    lib.datasets.create("qa", [
        Sample(id="good", messages=[Turn(role="user", content="Capital of France?")], completion="Paris",
               expected="Paris"),
        Sample(id="bad", messages=[Turn(role="user", content="Capital of Italy?")], completion="Milan",
               expected="Rome"),
    ])
    panel = make_panel(qtbot, app_ctx)
    app_ctx.graders_changed.emit()
    panel.select(grader="correct", dataset="qa", endpoint="fake")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        panel.start()
    info = finished.args[0]
    assert info.status == "completed" and info.counts == {"ok": 2}, info
    results = panel.results
    qtbot.waitUntil(lambda: results.model.rowCount() == 2 and not results.model.is_loading, timeout=WAIT_MS)
    results.select_row(1)
    judge = results.detail.judge.toPlainText()
    assert "Rationale" in judge and "Scripted rule gave FAIL." in judge
    assert "Prompt" in judge and "Capital of Italy?" in judge  # the exact prompt the judge saw
    assert "Milan" in results.detail.thread_view.toPlainText()
    assert results.model.data(results.model.index(1, COLUMN_INDEX["score"])) == "0.000"


def test_a_slow_judge_at_concurrency_1_moves_the_progress_sample_by_sample(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    """One call at a time, each slow: the label says 1 / N once the first answer is in (the engine
    handed a judge batches of 16 and wrote each batch whole: "0 / N · starting…" for 16 calls)."""
    from studio.core.demo.fake_server import FakeJudgeServer

    server = FakeJudgeServer(latency_ms=1500).start()  # each answer long enough to be seen
    try:
        lib: Library = app_ctx.library
        add_fake_endpoint(lib, server)
        app_ctx.endpoints_changed.emit()
        lib.graders.create(BinaryJudge(key="correct", criteria="The answer is correct.", endpoint="fake"))
        lib.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital #{i}?")],
                                          completion="Paris", expected="Paris") for i in range(40)])
        panel = make_panel(qtbot, app_ctx)
        app_ctx.graders_changed.emit()
        panel.select(grader="correct", dataset="qa", endpoint="fake")
        panel.concurrency.setValue(1)
        run_id = panel.start()
        assert run_id is not None
        qtbot.waitUntil(lambda: panel.progress_label.text().startswith("1 / 40"), timeout=WAIT_MS)
        with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS):
            panel.cancel()
    finally:
        server.stop()


def test_criteria_judge_verdicts_table(qtbot, app_ctx, fake_judge) -> None:  # type: ignore[no-untyped-def]
    lib: Library = app_ctx.library
    add_fake_endpoint(lib, fake_judge)
    lib.graders.create(CriteriaJudge(key="hud", endpoint="fake", criteria=[
        Criterion(text="Names the city [[judge:MET]]", weight=1.0),
        Criterion(text="Cites a source [[judge:UNMET]]", weight=1.0)]))
    lib.datasets.create("qa", [Sample(id="q", messages=[Turn(role="user", content="Capital of France?")],
                                      completion="Paris")])
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="hud", dataset="qa")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        panel.start()
    assert finished.args[0].status == "completed", finished.args[0]
    results = panel.results
    qtbot.waitUntil(lambda: results.model.rowCount() == 1 and not results.model.is_loading, timeout=WAIT_MS)
    results.select_row(0)
    judge = results.detail.judge.toPlainText()
    assert "Criteria" in judge and "Names the city" in judge and "MET" in judge and "UNMET" in judge
    assert results.model.data(results.model.index(0, COLUMN_INDEX["score"])) == "0.500"


def test_start_without_choices_says_what_to_do(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(qtbot, app_ctx)
    assert not panel.start_button.isEnabled()
    assert "Create a grader" in panel.message.text()
    assert panel.start() is None
    assert panel.results.grid_stack.currentWidget() is panel.results.empty


def test_where_to_grade_goes_into_the_run(qtbot, app_ctx, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"Where: this machine / Ray cluster at ...": the choice is stored with the run, so the child
    process (``run --resume``) and every later resume grade there."""
    import studio.ui.runs.panel as panel_module

    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(10))
    monkeypatch.setattr(panel_module, "ray_available", lambda: True)
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="exact", dataset="math")
    assert panel.run_options().executor == "local" and not panel.ray_address.isEnabled()
    panel.where.setCurrentIndex(panel.where.findData("ray"))
    assert panel.ray_address.isEnabled()
    panel.ray_address.setText("10.0.0.5:6379")
    options = panel.run_options()
    assert options.executor == "ray" and options.ray_address == "10.0.0.5:6379"

    monkeypatch.setattr(panel_module, "ray_available", lambda: False)
    without = make_panel(qtbot, app_ctx)
    ray_item = without.where.model().item(without.where.findData("ray"))
    assert not ray_item.isEnabled() and "grader-studio[ray]" in without.where.itemData(1, Qt.ItemDataRole.ToolTipRole)


FUNCTION_GRADER = "async def grade(thread):\n    return 1.0\n"


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    from studio.core.sandbox.launch import detect_mode

    require_namespaces()  # the child grades in the fallback
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    yield
    detect_mode.cache_clear()  # a mode detected without bwrap must not outlive the test's PATH


def test_the_settings_opt_in_reaches_the_child_and_the_panel_warns(qtbot, app_ctx, messages, no_bwrap) -> None:  # type: ignore[no-untyped-def]
    """The window's Settings > Sandbox opt-in reaches the run's child, and the run panel says, every time a
    run starts, that isolation is degraded.

    On a machine without bubblewrap (its PATH without ``bwrap``, inherited by the child) a function
    grader's run is refused unless the user ticked "Allow unsandboxed graders"; ticked, the child gets
    ``--allow-unsandboxed``, grades in the weaker sandbox and says so, and the panel keeps the warning in
    view after the run. Real child processes throughout."""
    from studio.ui.dialogs.settings import SettingsDialog

    lib = app_ctx.library
    lib.graders.create(FunctionGrader(key="fn", source=FUNCTION_GRADER, timeout_seconds=5))
    lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")], completion="4")
                              for i in range(3)])
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.select(grader="fn", dataset="d")

    # not ticked: the child refuses grader code without bubblewrap and says why
    assert panel.start() is not None
    assert "--allow-unsandboxed" not in panel.worker.process.arguments()
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as refused:
        pass
    assert refused.args == [None]
    assert "bubblewrap is not available" in panel.message.text()
    assert "isolation is degraded" not in panel.message.text()

    dialog = SettingsDialog(app_ctx, messages)  # the window's Settings dialog
    qtbot.addWidget(dialog)
    dialog.open()
    assert not dialog.allow_unsandboxed.isChecked()
    dialog.allow_unsandboxed.click()
    dialog.reject()
    assert app_ctx.settings.value("sandbox/allow_unsandboxed") == "true"

    # ticked: the flag reaches the child, which grades in the weaker sandbox and says so
    run_id = panel.start()
    assert run_id is not None
    assert panel.worker.process.arguments()[-1] == "--allow-unsandboxed"
    warnings: list[str] = []
    panel.worker.warning.connect(warnings.append)  # before the child can say anything
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        pass
    assert len(warnings) == 1 and warnings[0].startswith("isolation is degraded")
    info = finished.args[0]
    assert info is not None and info.id == run_id
    assert info.status == "completed" and info.counts == {"ok": 3}
    text = panel.message.text()
    assert f"Run {run_id} completed" in text and "isolation is degraded" in text  # still in view
    # the finished run's results load in the background: let that work end inside this test
    qtbot.wait(300)
    assert app_ctx.tasks.wait_idle()


def test_the_bar_waits_for_the_grid_and_the_newest_run_replaces_choose_a_run(qtbot, app_ctx) -> None:  # type: ignore[no-untyped-def]
    """Issue 35: no 100% while the grid still queries its rows; "Choose a run" never beside runs."""
    from studio.core.engine.runner import run_grader
    from studio.ui.runs.panel import LOADING_FORMAT, NO_RUNS

    lib: Library = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", math_samples(40))
    panel = make_panel(qtbot, app_ctx)
    qtbot.waitUntil(lambda: not panel.runs.runs and panel.results.empty.text() == NO_RUNS, timeout=WAIT_MS)
    assert panel.results.grid_stack.currentWidget() is panel.results.empty

    panel.select(grader="exact", dataset="math")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS):
        run_id = panel.start()
    results = panel.results
    qtbot.waitUntil(lambda: results.model.rowCount() == 40 and not results.model.is_loading, timeout=WAIT_MS)
    assert panel.progress_bar.value() == 40 and panel.progress_bar.format() == "%p%"
    results.model.refresh()  # the grid queries again (as after the last progress event)
    assert results.model.is_loading and "querying" in results.filters.count.text()
    assert panel.progress_bar.format() == LOADING_FORMAT  # not "100%" beside "querying…"
    qtbot.waitUntil(lambda: not results.model.is_loading, timeout=WAIT_MS)
    assert panel.progress_bar.format() == "%p%" and panel.progress_bar.value() == 40

    # a panel opened on a library with runs shows the newest, not "Choose a run"
    newer = run_grader(lib, "exact", "math").id
    assert newer != run_id
    again = make_panel(qtbot, app_ctx)
    qtbot.waitUntil(lambda: again.results.run_id == newer, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: again.results.model.rowCount() == 40, timeout=WAIT_MS)
    assert "Choose a run" not in again.results.empty.text() or \
        again.results.grid_stack.currentWidget() is again.results.table
    app_ctx.tasks.wait_idle()
