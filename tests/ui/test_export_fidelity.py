"""The export dialog says, before writing, what travels exactly, what is approximated and who refuses why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.models.endpoints import EndpointConfig
from studio.core.models.files import load
from studio.core.store.endpoints import EndpointRepository

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "graders"


def test_a_judge_shows_exact_parts_approximations_and_refusals(qtbot: Any, ctx: Any, messages: Any) -> None:
    from studio.ui.dialogs.export import ExportDialog

    EndpointRepository.of(ctx.library).save(EndpointConfig(name="demo-scripted-judge", model="judge-7b",
                                                            base_url="http://127.0.0.1:9/v1"))
    judge = load(DEMO / "qa-correctness-judge.grader.yaml")
    dialog = ExportDialog(ctx, judge, messages)
    qtbot.addWidget(dialog)
    assert "Cannot: HUD (" in dialog.summary.text()  # a refusal names its reason up front
    index = dialog.platform.findData("openai")
    dialog.platform.setCurrentIndex(index)
    qtbot.waitUntil(lambda: "qa-correctness-judge.openai.json" in dialog.files, timeout=20_000)
    text = dialog.support.text()
    assert "Travels exactly" in text and "2 few-shot messages" not in text and "4 few-shot messages" in text
    assert "model id 'judge-7b'" in text
    assert "Approximated:" in text and "NA is a failing label" in text
    exported = dialog.files["qa-correctness-judge.openai.json"]
    assert '"model": "judge-7b"' in exported and "demo-scripted-judge" not in exported
