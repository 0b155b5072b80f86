"""Designing a range judge: the live preview follows the form and the templates as you type."""

from __future__ import annotations

from typing import Any

from studio.core.models import Sample, Turn
from studio.ui.library.starters import starter


def _dataset(ctx: Any) -> None:
    ctx.library.datasets.create("qa", [Sample(id="q1", messages=[Turn(role="user", content="Capital of France?")],
                                              completion="Paris", expected="Paris")])
    ctx.datasets_changed.emit()


def test_range_judge_preview_changes_as_you_type(qtbot: Any, window: Any, ctx: Any) -> None:
    _dataset(ctx)
    ctx.library.graders.create(starter("range_judge", "quality"))
    ctx.graders_changed.emit()
    window.open_grader("quality")
    body = window.page.body
    preview = body.preview
    qtbot.waitUntil(lambda: "Capital of France?" in preview.last_text, timeout=5000)
    assert "Rate how well the response" in preview.last_text

    body.criteria.setFocus()
    body.criteria.moveCursor(body.criteria.textCursor().MoveOperation.End)
    qtbot.keyClicks(body.criteria, " Zebra-criterion")
    qtbot.waitUntil(lambda: "Zebra-criterion" in preview.last_text, timeout=5000)

    # the score range reaches the prompt, and the coverage check sees the gap
    body.high.setValue(7)
    qtbot.waitUntil(lambda: "from 1 to 7" in preview.last_text, timeout=5000)
    assert "6, 7" in body.subranges.footer.text()

    # a template typed in the editor is what the preview shows; a broken one is a sentence
    editor = body.templates.editors["user_template"]
    editor.setPlainText("ANSWER: {{{completion}}}")
    qtbot.waitUntil(lambda: "ANSWER: Paris" in preview.last_text, timeout=5000)
    editor.setPlainText("{{#if}")
    qtbot.waitUntil(lambda: preview.problem.isVisible(), timeout=5000)
    assert "Traceback" not in preview.problem.text()

    # the palette inserts a variable at the cursor
    editor.setPlainText("")
    item = next(body.templates.template_list.item(i) for i in range(body.templates.template_list.count())
                if body.templates.template_list.item(i).text() == "criteria")
    body.templates.tabs.setCurrentWidget(editor)
    body.templates.template_list.itemActivated.emit(item)
    assert editor.toPlainText() == "{{{criteria}}}"

    # reordering steps changes the definition
    steps = body.steps
    first = steps.list.item(0).text()
    steps.list.setCurrentRow(0)
    steps.down.click()
    assert window.page.current_definition().evaluation_steps[1] == first
    window.page.save()
    assert ctx.library.graders.get("quality").definition.score_range == (1, 7)


def test_locked_judge_is_read_only(qtbot: Any, window: Any, ctx: Any) -> None:
    ctx.library.graders.create(starter("binary_judge", "strict"))
    ctx.library.graders.set_locked("strict", True)
    ctx.graders_changed.emit()
    window.open_grader("strict")
    body = window.page.body
    assert body.criteria.isReadOnly()
    assert body.templates.editors["system_template"].isReadOnly()
    assert window.page.banner.isVisible()
