"""The run panel repairs a run as the CLI does (issues 43 and 45): Start says an unset key variable
before any run exists; a refused key stops the run with the sentence naming the key, Resume finishes
it once the key is fixed; "Retry errors" grades a completed run's errored samples again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.store import Library
from studio.ui.qt import Qt
from studio.ui.runs import RunPanel

WAIT_MS = 60_000
KEY_VAR = "PANEL_REPAIR_API_KEY"


@pytest.fixture
def fake_judge() -> Iterator[object]:
    from studio.core.demo.fake_server import FakeJudgeServer

    server = FakeJudgeServer().start()
    server.required_key = "right-key"
    yield server
    server.stop()


def make_panel(qtbot, app_ctx) -> RunPanel:  # type: ignore[no-untyped-def]
    panel = RunPanel(app_ctx)
    qtbot.addWidget(panel)
    panel.resize(1400, 900)
    panel.show()
    return panel


def listed(qtbot, panel: RunPanel, run_id: int, status: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for the runs list to show the run as ``status``, and select it."""
    def shown() -> bool:
        row = panel.runs.row_of(run_id)
        return row is not None and panel.runs.run_at(row).status == status

    qtbot.waitUntil(shown, timeout=WAIT_MS)
    panel.open_run(run_id)


@pytest.fixture
def judged(app_ctx, fake_judge, monkeypatch: pytest.MonkeyPatch) -> Library:  # type: ignore[no-untyped-def]
    from studio.core.models import BinaryJudge

    lib: Library = app_ctx.library
    add_endpoint(lib, fake_judge, api_key_env=KEY_VAR)  # type: ignore[arg-type]
    lib.graders.create(BinaryJudge(key="judge", criteria="Names the right capital.", endpoint="fake"))
    lib.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris", "Paris") for i in range(20)])
    lib.datasets.create("flaky", [qa(f"f{i}", "q", f"[[fault:500x5]] Paris {i}" if i < 2 else "Paris", "Paris")
                                  for i in range(6)])
    return lib


def test_start_says_an_unset_key_variable_before_a_run_exists(qtbot, app_ctx, judged, fake_judge,  # type: ignore[no-untyped-def]
                                                              monkeypatch) -> None:
    monkeypatch.delenv(KEY_VAR, raising=False)
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="judge", dataset="geo")
    assert panel.start() is None
    assert f"{KEY_VAR}, which is not set" in panel.message.text()
    assert judged.runs.list() == [] and fake_judge.requests["/v1/chat/completions"] == 0


def test_a_refused_key_stops_the_run_and_resume_finishes_it(qtbot, app_ctx, judged, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_VAR, "wrong-key")
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="judge", dataset="geo")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        run_id = panel.start()
    info = finished.args[0]
    assert info.id == run_id and info.status == "stopped" and info.done == 0
    text = panel.message.text()
    assert f"refused the key in {KEY_VAR} (HTTP 401" in text and "wrong-key" not in text
    listed(qtbot, panel, run_id, "stopped")
    assert panel.resume_button.isEnabled() and not panel.retry_button.isEnabled()  # nothing errored
    monkeypatch.setenv(KEY_VAR, "right-key")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    info = finished.args[0]
    assert info.status == "completed" and info.counts == {"ok": 20}


def test_retry_errors_grades_a_completed_runs_errors_again(qtbot, app_ctx, judged, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_VAR, "right-key")
    panel = make_panel(qtbot, app_ctx)
    panel.select(grader="judge", dataset="flaky")
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        run_id = panel.start()
    info = finished.args[0]
    assert info.status == "completed" and info.counts == {"ok": 4, "error": 2}, info
    listed(qtbot, panel, run_id, "completed")
    assert not panel.resume_button.isEnabled() and panel.retry_button.isEnabled()
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as finished:
        qtbot.mouseClick(panel.retry_button, Qt.MouseButton.LeftButton)
    info = finished.args[0]
    assert info.status == "completed" and info.counts == {"ok": 6} and info.done == 6
    assert not panel.retry_button.isEnabled()
