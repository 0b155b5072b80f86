"""Every demo grader opens in its editor and reads back unchanged; the shortcuts reach their actions."""

from __future__ import annotations

from typing import Any

from studio.core.demo import build_demo
from studio.core.models.definition import dump_grader
from studio.ui.main_window import TAB_GRADER, TAB_RUN
from studio.ui.qt import Qt


def test_every_demo_grader_round_trips_through_its_editor(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    build_demo(ctx.library)
    ctx.graders_changed.emit()
    ctx.datasets_changed.emit()
    for record in ctx.library.graders.list():
        assert window.open_grader(record.key), messages.errors
        built = window.page.current_definition()
        assert dump_grader(built) == dump_grader(record.definition), record.key
        assert not window.page.is_dirty(), record.key
    assert not messages.errors


def test_shortcuts(qtbot: Any, window: Any, ctx: Any) -> None:
    from studio.ui.library.starters import starter

    ctx.library.graders.create(starter("function", "short"))
    ctx.graders_changed.emit()
    window.open_grader("short")
    editor = window.page.body.editor
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.page.body.find_bar.isVisible()
    qtbot.keyClick(window.page.body.find_bar.field, Qt.Key.Key_Escape)
    assert not window.page.body.find_bar.isVisible()
    qtbot.keyClick(editor, Qt.Key.Key_F5)
    assert window.tabs.currentIndex() == TAB_RUN
    window.tabs.setCurrentIndex(TAB_GRADER)


def test_library_search_filters(qtbot: Any, window: Any, ctx: Any) -> None:
    build_demo(ctx.library)
    ctx.graders_changed.emit()
    window.library.search.setText("faithfulness")
    proxy = window.library.proxy
    leaves = [proxy.index(r, 0, proxy.index(g, 0)).data() for g in range(proxy.rowCount())
              for r in range(proxy.rowCount(proxy.index(g, 0)))]
    assert leaves and all("aithful" in leaf for leaf in leaves)


def test_the_status_bar_says_why_the_namespaces_fallback_is_unavailable(window) -> None:  # type: ignore[no-untyped-def]
    from studio.core.sandbox.info import Protection, SandboxInfo

    reason = "this kernel refuses it (unshare: mount /proc failed: Operation not permitted)"
    info = SandboxInfo(platform="Linux", mode="limits_only", studio_is_root=False,
                       namespaces_fallback=f"unavailable: {reason}",
                       protections=[Protection(name="rlimits", active=True)],
                       warnings=[f"the namespaces fallback (unshare + a private root) is unavailable: {reason}"])
    window._sandbox_known(info)
    assert window.sandbox_label.text().startswith("⚠")
    assert reason in window.sandbox_label.toolTip()
