"""Checks that let bad work through (issue 43): Ctrl+S on a grader that fails Validate's quick checks
asks before it becomes a version (and never loses the text); the Checks panel never shows results for
a text that is no longer there; a range judge's backwards subrange is refused in the designer."""

from __future__ import annotations

from typing import Any

from studio.core.models import parse_grader
from studio.ui.library.starters import starter
from studio.ui.qt import Qt

GOOD = '''\
async def grade(thread):
    return 1.0
'''
BROKEN = '''\
async def grade(thread):
    return 1.0 +
'''


def _function(window: Any, ctx: Any) -> Any:
    ctx.library.graders.create(parse_grader({"kind": "function", "key": "f", "source": GOOD}))
    ctx.graders_changed.emit()
    window.open_grader("f")
    return window.page


def test_ctrl_s_with_a_syntax_error_asks_first_and_keeps_the_text(qtbot: Any, window: Any, ctx: Any,
                                                                  messages: Any) -> None:
    page = _function(window, ctx)
    editor = page.body.editor
    editor.setPlainText(BROKEN)
    messages.confirm_answer = False  # "Cancel": keep editing
    qtbot.keyClick(editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert messages.asked[-1] == "Save with a failing check?"
    assert "syntax (line 2)" in messages.questions[-1][1] and "Save anyway as v2" in messages.questions[-1][1]
    assert [v.version for v in ctx.library.graders.versions("f")] == [1], "no version without the user's word"
    assert editor.toPlainText() == BROKEN and page.is_dirty(), "the text stays, unsaved"
    assert any(c.name == "syntax" and c.status == "failed" for c in page.checks.checks)
    assert editor.textCursor().blockNumber() == 1, "the cursor goes to the failing line"

    messages.confirm_answer = True  # "Save anyway": the version says what it was saved with
    qtbot.keyClick(editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    versions = ctx.library.graders.versions("f")
    assert [v.version for v in versions] == [1, 2] and versions[-1].definition.source == BROKEN
    assert "syntax (line 2)" in versions[-1].message
    assert not page.is_dirty()


def test_a_clean_save_asks_nothing(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    page = _function(window, ctx)
    page.body.editor.setPlainText(GOOD + "\n# a note\n")
    assert page.save()
    assert "Save with a failing check?" not in messages.asked
    assert ctx.library.graders.versions("f")[-1].message == ""


def test_the_checks_go_out_of_date_at_once_and_follow_the_fixed_text(qtbot: Any, window: Any, ctx: Any) -> None:
    page = _function(window, ctx)
    editor = page.body.editor
    editor.setPlainText(BROKEN)
    qtbot.waitUntil(lambda: any(c.name == "syntax" and c.status == "failed" for c in page.checks.checks),
                    timeout=10_000)  # checked again after a pause in typing, no Validate pressed
    assert not page.checks.stale and page.checks.tree.isEnabled()

    editor.setPlainText(GOOD)  # the fix: the failure shown is for a text no longer there
    assert page.checks.stale and not page.checks.tree.isEnabled()
    assert "Out of date" in page.checks.summary.text()
    qtbot.waitUntil(lambda: not page.checks.stale, timeout=10_000)
    syntax = next(c for c in page.checks.checks if c.name == "syntax")
    assert syntax.status == "passed"
    assert not [c for c in page.checks.checks if c.status == "failed"]
    assert "not run yet" in page.checks.summary.text(), "the sandbox's checks wait for Validate, and say so"


def test_validate_results_for_an_edited_text_are_shown_out_of_date(qtbot: Any, window: Any, ctx: Any) -> None:
    page = _function(window, ctx)
    page.validate()
    page.body.editor.setPlainText(BROKEN)  # typed while the sandbox runs
    qtbot.waitUntil(lambda: bool(page.checks.checks) and page.checks.button.isEnabled(), timeout=30_000)
    qtbot.waitUntil(lambda: any(c.name == "syntax" and c.status == "failed" for c in page.checks.checks)
                    and not page.checks.stale, timeout=10_000)


def test_the_designer_refuses_a_backwards_subrange_with_its_field_named(qtbot: Any, window: Any, ctx: Any,
                                                                        messages: Any) -> None:
    ctx.library.graders.create(starter("range_judge", "quality"))
    ctx.graders_changed.emit()
    window.open_grader("quality")
    body = window.page.body
    body.high.setValue(10)
    body.subranges.set_rows([[1, 4, "bad"], [10, 5, "good"]])
    body.subranges.changed.emit()
    footer = body.subranges.footer
    assert footer.objectName() == "error" and "subrange 2 runs backwards" in footer.text()
    assert "min 10 is above its max 5" in footer.text()
    assert not window.page.save()
    assert "min 10 is above its max 5" in messages.errors[-1][1]
    assert ctx.library.graders.get("quality").current_version == 1


def test_a_stored_backwards_subrange_opens_shown_invalid(qtbot: Any, window: Any, ctx: Any) -> None:
    data = {"kind": "range_judge", "key": "old", "criteria": "c", "score_range": [1, 10],
            "subrange_expectations": [{"min": 10, "max": 5, "expectation": "good"}]}
    ctx.library.graders.create(parse_grader(data, stored=True))  # as a release before the rule stored it
    ctx.graders_changed.emit()
    assert window.library.model.index_of("old").isValid()
    window.open_grader("old")
    footer = window.page.body.subranges.footer
    assert footer.objectName() == "error" and "min 10 is above its max 5" in footer.text()
