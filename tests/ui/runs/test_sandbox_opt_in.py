"""The window's Settings > Sandbox opt-in reaches the run's child, and the run panel says, every time a
run starts, that isolation is degraded.

On a machine without bubblewrap (its PATH without ``bwrap``, inherited by the child) a function
grader's run is refused unless the user ticked "Allow unsandboxed graders"; ticked, the child gets
``--allow-unsandboxed``, grades in the weaker sandbox and says so, and the panel keeps the warning in
view after the run. Real child processes throughout.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from run_helpers import path_without_bwrap

from studio.core.models import FunctionGrader, Sample, Turn
from studio.ui.qt import QtWidgets

WAIT_MS = 60_000
GRADER = "async def grade(thread):\n    return 1.0\n"


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))


def test_the_settings_opt_in_reaches_the_child_and_the_panel_warns(qtbot, window, no_bwrap) -> None:  # type: ignore[no-untyped-def]
    lib = window.ctx.library
    lib.graders.create(FunctionGrader(key="fn", source=GRADER, timeout_seconds=5))
    lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")], completion="4")
                              for i in range(3)])
    window.ctx.graders_changed.emit()
    window.ctx.datasets_changed.emit()
    panel = window.run_panel
    panel.select(grader="fn", dataset="d")

    # not ticked: the child refuses grader code without bubblewrap and says why
    assert panel.start() is not None
    assert "--allow-unsandboxed" not in panel.worker.process.arguments()
    with qtbot.waitSignal(panel.run_finished, timeout=WAIT_MS) as refused:
        pass
    assert refused.args == [None]
    assert "bubblewrap is not available" in panel.message.text()
    assert "isolation is degraded" not in panel.message.text()

    dialog = window.settings()
    assert "bubblewrap is not available" in " ".join(label.text() for label in dialog.findChildren(QtWidgets.QLabel))
    assert not dialog.allow_unsandboxed.isChecked()
    dialog.allow_unsandboxed.click()
    dialog.reject()
    assert window.ctx.settings.value("sandbox/allow_unsandboxed") == "true"

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
