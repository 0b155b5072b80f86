"""The window as a daily tool (issue 15): controls say what they do, runs and exports use what the
user sees, the basics (edit menu, help, import, switching libraries, the Trash) are there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.demo import build_demo
from studio.core.models import BuiltinGrader
from studio.core.platforms import platforms
from studio.ui.main_window import TAB_RUN
from studio.ui.qt import Qt, QtGui, QtWidgets


def _demo(ctx: Any) -> None:
    build_demo(ctx.library)
    ctx.graders_changed.emit()
    ctx.datasets_changed.emit()


def _edit_description(window: Any, text: str) -> None:
    window.page.body.common.description.setPlainText(text)
    assert window.page.is_dirty()


def test_save_is_offered_only_with_edits_and_delete_never_on_a_locked_grader(qtbot: Any, window: Any,
                                                                              ctx: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-token-f1")
    assert not window.page.save_button.isEnabled(), "nothing to save yet"
    _edit_description(window, "changed")
    assert window.page.save_button.isEnabled()
    assert window.page.save() and not window.page.save_button.isEnabled()

    window.grader_actions.set_locked("qa-token-f1", True)
    window.library.select("qa-token-f1", emit=False)
    assert not window.library.delete_button.isEnabled() and "unlock" in window.library.delete_button.toolTip()
    assert not window.page.save_button.isEnabled()
    window.grader_actions.set_locked("qa-token-f1", False)
    window.library.select("qa-token-f1", emit=False)
    assert window.library.delete_button.isEnabled()


def test_trashing_a_grader_with_unsaved_edits_asks_first(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-token-f1")
    _edit_description(window, "my unsaved words")
    messages.unsaved_answer = "cancel"
    assert not window.grader_actions.delete("qa-token-f1")
    assert "unsaved Token F1 (built-in)" in messages.asked[-1] or messages.asked[-1].startswith("unsaved")
    assert not ctx.library.graders.get("qa-token-f1").deleted and window.page.is_dirty()
    messages.unsaved_answer = "save"
    assert window.grader_actions.delete("qa-token-f1")
    record = ctx.library.graders.get("qa-token-f1", include_deleted=True)
    assert record.deleted and record.definition.description == "my unsaved words"


def test_a_trashed_grader_opens_read_only_with_restore(qtbot: Any, window: Any, ctx: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-token-f1")
    assert window.grader_actions.delete("qa-token-f1")
    assert window.grader_stack.currentWidget() is window.page, "not the empty state"
    assert window.page.banner.isVisible() and "Trash" in window.page.banner_text.text()
    assert window.page.unlock_button.text() == "Restore" and window.page.read_only
    assert not window.page.save_button.isEnabled() and not window.page.export_button.isEnabled()
    window.library.select("qa-exact-match", emit=True)  # another grader, then the Trash entry again
    assert window.page.key == "qa-exact-match"
    window.library.select("qa-token-f1", in_trash=True, emit=True)
    assert window.page.key == "qa-token-f1" and window.page.record.deleted
    window.page.unlock_button.click()
    assert not ctx.library.graders.get("qa-token-f1").deleted
    assert not window.page.banner.isVisible() and not window.page.read_only


def test_each_kind_family_has_its_own_clear_icon(qtbot: Any, window: Any) -> None:
    from studio.core.kinds import kinds
    from studio.ui.icons import icon, kind_icon

    def pixels(i: QtGui.QIcon) -> bytes:
        image = i.pixmap(16, 16).toImage().convertToFormat(QtGui.QImage.Format.Format_ARGB32)
        return bytes(image.constBits())

    families = {"function": "function", "binary_judge": "judge", "builtin": "builtin", "bash": "bash",
                "composite": "composite", "external_endpoint": "external"}
    drawn = {family: pixels(kind_icon(kind)) for kind, family in families.items()}
    assert all(not kind_icon(kind).isNull() for kind in kinds())
    assert len(set(drawn.values())) == len(families), "two kind families share an icon"
    assert pixels(kind_icon("range_judge")) == drawn["judge"]
    assert all(p != pixels(icon("lock")) for p in drawn.values())


def test_the_sidebar_keeps_its_width(qtbot: Any, window: Any, ctx: Any) -> None:
    _demo(ctx)
    window.resize(1280, 800)
    QtWidgets.QApplication.processEvents()
    width = window.library.width()
    ctx.library.graders.set_locked("answer-quality-1to5", True)
    ctx.graders_changed.emit()
    for key in ("answer-quality-1to5", "qa-exact-match", "qa-blended-score"):
        window.open_grader(key)
        qtbot.waitUntil(lambda: window.library.width() == width)
    window.grader_stack.setCurrentWidget(window.empty)
    qtbot.waitUntil(lambda: window.library.width() == width)


def test_a_run_uses_what_the_user_sees(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-token-f1")
    panel = window.run_panel
    assert panel.grader.currentData() == "qa-token-f1", "the picker follows the editor"
    _edit_description(window, "edited before the run")
    window.run_current()
    assert window.tabs.currentIndex() == TAB_RUN
    panel.select(dataset="qa")
    panel.limit.setValue(3)

    messages.edits_answer = "cancel"
    assert panel.start() is None and ctx.library.runs.list() == []

    messages.edits_answer = "saved"
    run_id = panel.start()
    assert run_id is not None and ctx.library.runs.get(run_id).grader_version == 1
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=60_000)
    assert window.page.is_dirty(), "using the saved version keeps the edits in the editor"

    messages.edits_answer = "save"
    run_id = panel.start()
    assert run_id is not None and ctx.library.runs.get(run_id).grader_version == 2
    assert ctx.library.graders.get("qa-token-f1").definition.description == "edited before the run"
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=60_000)
    assert sum("use edits" in a for a in messages.asked) == 3


def test_an_export_uses_a_saved_version_and_opens_on_a_platform_that_can(qtbot: Any, window: Any, ctx: Any,
                                                                         messages: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-token-f1")
    _edit_description(window, "exported words")
    messages.edits_answer = "saved"
    window.export()
    assert window.export_dialog.definition.description != "exported words"
    window.export_dialog.close()
    messages.edits_answer = "save"
    window.export()
    dialog = window.export_dialog
    assert dialog.definition.description == "exported words"
    assert ctx.library.graders.get("qa-token-f1").current_version == 2
    dialog.close()

    # a judge most platforms cannot carry: the dialog opens on one that can, and says which can
    window.open_grader("answer-quality-1to5")
    window.export()
    dialog = window.export_dialog
    found = platforms()
    first = dialog.platform.currentData()
    # the dialog judges capability with the library's endpoints: a judge names its endpoint's model id
    from studio.core.platforms._fields import export_endpoints
    from studio.core.store.endpoints import EndpointRepository

    with export_endpoints({e.name: e for e in EndpointRepository.of(ctx.library).list()}):
        assert found[first].can_export(dialog.definition).ok
        capable = [n for n, p in found.items() if p.can_export(dialog.definition).ok]
    assert set(dialog.capable) == set(capable) and capable
    assert all(found[n].label in dialog.summary.text() for n in found)
    labels = [dialog.platform.itemText(i) for i in range(dialog.platform.count())]
    assert all(label.startswith("✓") for label in labels[:len(capable)])
    assert all(label.startswith("✗") for label in labels[len(capable):])
    qtbot.waitUntil(lambda: dialog.file_list.count() > 0, timeout=10_000)
    dialog.close()


def test_the_grader_picker_is_sorted_by_name(qtbot: Any, window: Any, ctx: Any) -> None:
    _demo(ctx)
    combo = window.run_panel.grader
    names = [combo.itemText(i).rsplit("  (", 1)[0].casefold() for i in range(combo.count())]
    assert names == sorted(names) and len(names) == len(ctx.library.graders.list())


def test_edit_menu_acts_on_the_focused_field(qtbot: Any, window: Any, ctx: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-exact-match")
    window.activateWindow()
    editor = window.page.body.editor
    editor.setFocus()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is editor)
    original = editor.toPlainText()
    assert window.edit_actions["selectAll"].isEnabled()
    window.edit_actions["selectAll"].trigger()
    assert editor.textCursor().selectedText()
    window.edit_actions["cut"].trigger()
    assert editor.toPlainText() == "" and QtGui.QGuiApplication.clipboard().text().startswith("import")
    window.edit_actions["undo"].trigger()
    assert editor.toPlainText() == original
    window.edit_actions["redo"].trigger()
    assert editor.toPlainText() == ""
    window.edit_actions["paste"].trigger()
    assert editor.toPlainText() == original
    search = window.library.search
    search.setFocus()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is search)
    QtGui.QGuiApplication.clipboard().setText("faith")
    window.edit_actions["paste"].trigger()
    assert search.text() == "faith"
    window.edit_actions["undo"].trigger()
    assert search.text() == ""
    window.page.discard()


def test_help_lists_shortcuts_and_points_to_the_documentation(qtbot: Any, window: Any, messages: Any) -> None:
    window.show_shortcuts()
    title, text = messages.infos[-1]
    assert title == "Keyboard shortcuts"
    for expected in ("Ctrl+S", "Ctrl+Return", "F5", "Ctrl+Z", "Ctrl+I"):
        assert expected in text, expected
    path = window.documentation_path()
    assert path.is_file() and "grader-studio" in path.read_text(encoding="utf-8")


def test_import_a_grader_from_a_platform_file(qtbot: Any, window: Any, ctx: Any, messages: Any,
                                              tmp_path: Path) -> None:
    grader = BuiltinGrader(key="imported-exact", function="exact_match")
    result = platforms()["openai"].export(grader)
    path = tmp_path / "grader.json"
    path.write_text(next(iter(result.files.values())), encoding="utf-8")
    messages.file = str(path)
    created = window.import_grader()
    assert created and ctx.library.graders.get(created[0]).kind == "builtin"
    assert window.page.key == created[0]
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": "world"}')
    messages.file = str(junk)
    assert window.import_grader() == [] and messages.errors and "Traceback" not in messages.errors[-1][1]


def test_open_another_library(qtbot: Any, window: Any, ctx: Any, tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    new = window.open_library(other)
    assert new is not None
    qtbot.addWidget(new)
    assert new.ctx.db_path == other and other.exists() and not window.isVisible() and new.isVisible()
    assert "other.sqlite" in new.windowTitle() and new.owns_context
    new.close()


def test_endpoint_test_reply_is_never_cut_mid_word(qtbot: Any, window: Any, ctx: Any, memory_keyring: Any) -> None:
    from studio.core.demo.fake_server import FakeJudgeServer
    from studio.ui.dialogs.settings import reply_excerpt

    words = ("OK. This scripted endpoint answers at some length so that the reply does not fit on the "
             "settings page in one piece")
    assert reply_excerpt("OK") == "OK"
    dialog = window.settings()
    qtbot.addWidget(dialog)
    page = dialog.endpoints
    with FakeJudgeServer() as server:
        server.add_rule("single word OK", words)
        page.add_button.click()
        page.name.setText("long-talker")
        page.base_url.setText(server.base_url)
        page.model.setText("fake-judge")
        assert page.save()
        page.test_button.click()
        qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=15_000)
    shown = page.result.text()
    assert "Answered" in shown, shown
    reply = shown.split("Reply: “", 1)[1].split("”", 1)[0]
    assert reply.endswith(" …")
    assert all(word in words.split() for word in reply.removesuffix(" …").split()), reply
    assert page.result.toolTip() == words
    dialog.close()


def test_an_empty_template_editor_shows_its_whole_placeholder(qtbot: Any) -> None:
    from studio.ui.editor.code_editor import CodeEditor

    editor = CodeEditor("python")
    qtbot.addWidget(editor)
    editor.setPlaceholderText("first line of the placeholder\nsecond")
    editor.set_text("")
    assert editor.extraSelections() == [], "no current-line band over the placeholder's first line"
    editor.set_text("x = 1")
    assert len(editor.extraSelections()) == 1
    editor.selectAll()
    editor.textCursor().removeSelectedText()
    assert editor.toPlainText() == "" and editor.extraSelections() == []


def test_the_detail_pane_shows_a_judges_rationale_first_and_keeps_its_size(qtbot: Any, ctx: Any) -> None:
    from studio.ui.results.view import SPLITTER_KEY, ResultsView

    view = ResultsView(ctx)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    detail = view.detail
    judged = {"sample_idx": 0, "sample_id": "s1", "status": "ok", "score": 1.0, "scores": {},
              "rationale": "The answer names the capital.", "details": {}, "sample_data": None}
    detail.set_result(judged)
    assert detail.tabs.currentWidget() is detail.judge
    assert "The answer names the capital." in detail.judge.toPlainText()
    plain = {**judged, "rationale": None, "sample_id": "s2"}
    detail.set_result(plain)
    assert detail.tabs.currentWidget() is detail.thread_view
    detail.tabs.setCurrentWidget(detail.raw)
    detail.set_result(judged)
    assert detail.tabs.currentWidget() is detail.raw, "a tab the analyst chose stays chosen"

    grid, pane = view.splitter.sizes()
    # beside the grid (issue 24: under it, a laptop screen kept four rows), with room to read in
    assert view.splitter.orientation() == Qt.Orientation.Horizontal and pane >= 0.4 * (grid + pane)
    view.splitter.moveSplitter(200, 1)
    view.splitter.splitterMoved.emit(200, 1)
    assert ctx.settings.value(SPLITTER_KEY) is not None
    again = ResultsView(ctx)
    qtbot.addWidget(again)
    again.resize(900, 700)
    again.show()
    assert again.splitter.sizes()[0] == view.splitter.sizes()[0]


def test_switching_the_theme_is_not_an_edit(qtbot: Any, window: Any, ctx: Any) -> None:
    _demo(ctx)
    window.open_grader("qa-exact-match")
    window.set_theme("dark")
    assert not window.page.save_button.isEnabled() and "●" not in window.windowTitle()
    _edit_description(window, "a real edit")
    window.set_theme("light")
    assert window.page.save_button.isEnabled() and window.page.is_dirty()
    window.page.discard()


def test_several_graders_with_an_edited_one_ask_as_export_does(qtbot: Any, window: Any, ctx: Any,
                                                                messages: Any) -> None:
    """Issue 35: a one-off suite ("Several…") or a saved suite with the open grader edited asks whether
    to save the edits, instead of silently running the saved version."""
    from studio.core.models.suite import SuiteDefinition, SuiteMember
    from studio.ui.suites.picker import add_one_off

    _demo(ctx)
    ctx.library.suites.create(SuiteDefinition(key="two", overall="mean", graders=[
        SuiteMember(grader="qa-exact-builtin"), SuiteMember(grader="qa-token-f1")]))
    window.run_panel.reload_choices()
    window.open_grader("qa-token-f1")
    _edit_description(window, "edited, not saved")
    panel = window.run_panel
    panel.select(dataset="qa")
    add_one_off(panel.grader, ["qa-exact-builtin", "qa-token-f1"])
    messages.edits_answer = "cancel"
    assert panel.start() is None and ctx.library.runs.list() == []
    assert messages.asked[-1].startswith("use edits") and "the run" in messages.asked[-1]
    panel.select(grader="two")
    assert panel.start() is None and ctx.library.runs.list() == []
    assert sum("use edits" in a for a in messages.asked) == 2
    window.page.discard()


def test_defaults_pick_a_dataset_the_grader_reads_and_try_shows_a_verdict(qtbot: Any, window: Any, ctx: Any) -> None:
    """Issue 35: a QA judge's report card and run form open on the qa dataset, not json-outputs; a pairwise
    judge's on the pairs; Try on a binary judge says PASS/FAIL/NA beside its score."""
    from studio.core.models import Outcome
    from studio.ui.editor.try_panel import score_text
    from studio.ui.samples import preferred_dataset

    names = ["json-outputs", "qa", "qa-pairs", "rag"]
    assert preferred_dataset(["demo", "judge", "qa"], "binary_judge", names) == "qa"
    assert preferred_dataset(["demo", "json"], "builtin", names) == "json-outputs"
    assert preferred_dataset(["demo", "pairwise", "qa"], "pairwise_judge", names) == "qa-pairs"
    assert preferred_dataset(["demo"], "function", names) is None
    _demo(ctx)
    panel = window.run_panel
    panel.select(dataset="json-outputs")
    panel.select(grader="qa-correctness-judge")
    assert panel.dataset.currentData() == "qa"
    panel.select(grader="pairwise-preference")
    assert panel.dataset.currentData() == "qa-pairs"
    window.open_grader("qa-correctness-judge")
    assert window.page.report_card.dataset.currentText() == "qa"
    assert window.page.try_panel.picker.dataset.currentData() == "qa"

    assert score_text(Outcome.scored(1.0, {}, details={"verdict": "PASS"})) == "PASS · 1"
    assert score_text(Outcome.scored(0.0, {}, details={"verdict": "FAIL"})) == "FAIL · 0"
    assert score_text(Outcome.scored(0.75, {})) == "0.75"
    window.page.try_panel.show_outcome(Outcome.scored(1.0, {}, details={"verdict": "PASS"}))
    assert window.page.try_panel.score.text() == "PASS · 1"
