"""The analyst's day in one test: create → edit → validate → try → save → lock → unlock → delete → restore."""

from __future__ import annotations

from typing import Any

from studio.ui.library.model import TRASH
from studio.ui.library.starters import starter
from studio.ui.qt import Qt

SOURCE = '''\
async def grade(thread):
    completion = (thread.completion() or "").lower()
    expected = str((thread.metadata or {}).get("expected", "")).lower()
    return 1.0 if expected and expected in completion else 0.0
'''


class _Dialog:
    """Stands in for the New dialog: answers at once with a starter definition."""

    def __init__(self, key: str, kind: str) -> None:
        self.key, self.kind = key, kind

    def __call__(self, taken: set[str], parent: Any, kind: str | None = None) -> _Dialog:
        return self

    def exec(self) -> bool:
        return True

    def definition(self):  # type: ignore[no-untyped-def]
        return starter(self.kind, self.key, "My grader")


def test_full_grader_lifecycle(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    page = window.page
    window.grader_actions.new_dialog_factory = _Dialog("my-grader", "function")

    # create: it opens in the editor and shows in the library
    assert window.grader_actions.new() == "my-grader"
    assert page.key == "my-grader"
    assert window.library.model.index_of("my-grader").isValid()

    # edit
    editor = page.body.editor
    editor.setPlainText(SOURCE)
    assert page.is_dirty()
    assert "●" in window.windowTitle()

    # validate (off the GUI thread)
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(page.checks.checks), timeout=20_000)
    assert not [c for c in page.checks.checks if c.status == "failed"], [c.message for c in page.checks.checks]

    # try on a hand-written sample
    picker = page.try_panel.picker
    picker.dataset.setCurrentIndex(picker.dataset.findData("__handwritten__"))
    picker.question.setPlainText("Capital of France?")
    picker.completion.setPlainText("It is Paris.")
    picker.expected.setText("Paris")
    page.try_sample()
    qtbot.waitUntil(lambda: page.try_panel.button.isEnabled(), timeout=30_000)
    outcome = page.try_panel.outcome
    assert outcome is not None, page.try_panel.status.text()
    assert outcome.status == "ok" and outcome.score == 1.0, outcome

    # save = a new version
    qtbot.keyClick(editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    versions = ctx.library.graders.versions("my-grader")
    assert [v.version for v in versions] == [1, 2]
    assert versions[-1].definition.source == SOURCE
    assert not page.is_dirty()

    # lock: read-only, banner, delete refused with a sentence
    page.lock_button.click()
    assert ctx.library.graders.get("my-grader").locked
    assert editor.isReadOnly() and page.banner.isVisible() and not page.save_button.isEnabled()
    assert not window.grader_actions.delete("my-grader")
    assert messages.errors, "the refusal is shown"
    title, text = messages.errors[-1]
    assert "locked" in text and "Traceback" not in text
    assert not ctx.library.graders.get("my-grader").deleted

    # unlock from the banner, then delete to the Trash
    page.unlock_button.click()
    assert not ctx.library.graders.get("my-grader").locked and not editor.isReadOnly()
    assert window.grader_actions.delete("my-grader")
    # the trashed grader stays open, read-only, with Restore in its banner (not the empty state)
    assert window.grader_stack.currentWidget() is page and page.read_only and page.record.deleted
    assert page.banner.isVisible() and page.unlock_button.text() == "Restore"
    assert window.library.model.index_of("my-grader", in_trash=True).isValid()
    groups = [window.library.model.index(r, 0).data() for r in range(window.library.model.rowCount())]
    assert any(g.startswith("Trash") for g in groups)

    # restore from the Trash via the sidebar
    assert window.library.select("my-grader", in_trash=True, emit=False)
    assert window.library.restore_button.isVisibleTo(window.library)
    window.library.restore_button.click()
    assert not ctx.library.graders.get("my-grader").deleted
    assert page.key == "my-grader"
    assert TRASH not in [g.kind for g in window.library.model._groups]


def test_unsaved_changes_guard(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    for key in ("first", "second"):
        ctx.library.graders.create(starter("function", key))
    ctx.graders_changed.emit()
    assert window.open_grader("first")
    window.page.body.editor.appendPlainText("# edited")
    messages.unsaved_answer = "cancel"
    assert not window.open_grader("second")
    assert window.page.key == "first"
    messages.unsaved_answer = "save"
    assert window.open_grader("second")
    assert ctx.library.graders.get("first").current_version == 2


def test_versions_dialog_diff_and_restore(qtbot: Any, window: Any, ctx: Any) -> None:
    definition = starter("builtin", "exact")
    ctx.library.graders.create(definition)
    ctx.library.graders.save(definition.model_copy(update={"name": "Renamed"}))
    ctx.graders_changed.emit()
    window.open_grader("exact")
    dialog = window.grader_actions.show_versions("exact")
    qtbot.addWidget(dialog)
    dialog.list.setCurrentItem(dialog.list.topLevelItem(1))  # v1
    assert dialog.selected_version() == 1
    assert "differ" in dialog.summary.text()
    assert "Renamed" in dialog.diff.text(1) and "Renamed" not in dialog.diff.text(0)
    dialog.restore.click()
    record = ctx.library.graders.get("exact")
    assert record.current_version == 3 and record.definition.name == ""


def test_window_state_is_remembered(qtbot: Any, window: Any, ctx: Any) -> None:
    ctx.library.graders.create(starter("builtin", "remember-me"))
    ctx.graders_changed.emit()
    window.open_grader("remember-me")
    window.close()
    assert ctx.settings.value("window/geometry") is not None
    assert ctx.settings.value("window/last_grader") == "remember-me"
