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


def test_a_local_model_id_is_a_warning_and_a_dataset_makes_one_eval(qtbot: Any, ctx: Any, messages: Any) -> None:
    """Issue 35: as `export --dataset --model`; the scripted judge's 'fake-judge' is no model OpenAI knows."""
    from studio.core.demo import build_demo
    from studio.ui.dialogs.export import ExportDialog

    build_demo(ctx.library)  # the demo's judge calls the scripted judge on 127.0.0.1
    judge = ctx.library.graders.get("qa-correctness-judge").definition
    dialog = ExportDialog(ctx, judge, messages)
    qtbot.addWidget(dialog)
    dialog.platform.setCurrentIndex(dialog.platform.findData("openai"))
    qtbot.waitUntil(lambda: "qa-correctness-judge.openai.json" in dialog.files, timeout=20_000)
    text = dialog.support.text()
    assert text.startswith("⚠ The model id 'fake-judge'") and "would not know it" in text
    assert "• model id 'fake-judge'" not in text  # not among what travels exactly
    assert dialog.model.placeholderText() == "the judge's: fake-judge"

    dialog.model.setText("gpt-4.1-mini")
    dialog.model.editingFinished.emit()
    qtbot.waitUntil(lambda: "model id 'gpt-4.1-mini'" in dialog.support.text(), timeout=20_000)
    assert "⚠ The model id" not in dialog.support.text()
    assert '"model": "gpt-4.1-mini"' in dialog.files["qa-correctness-judge.openai.json"]

    alone = set(dialog.files)
    assert dialog.dataset.isEnabled()
    dialog.dataset.setCurrentIndex(dialog.dataset.findData("qa"))
    qtbot.waitUntil(lambda: "qa.items.jsonl" in dialog.files, timeout=20_000)  # the eval and its rows
    assert set(dialog.files) != alone and '"id": "qa-001"' in dialog.files["qa.items.jsonl"]
    assert '"model": "gpt-4.1-mini"' in dialog.files["qa.eval.json"]

    dialog.platform.setCurrentIndex(dialog.platform.findData("adaptive"))
    assert not dialog.dataset.isEnabled()  # Adaptive takes no eval with its dataset
    ctx.tasks.wait_idle()
