"""Rough edges a new user met (issue 43): the window's title, a conflict diff's long line, the
Generate dialog's name and advice, and five graders whose names differ only at the end."""

from __future__ import annotations

from typing import Any

from studio.ui.qt import QtGui, QtWidgets


def _shown_title(title: str, display_name: str) -> str:
    """What a window system shows: Qt's QPlatformWindow::formatWindowTitle appends the application's
    display name to a title that does not already end with it."""
    return title if not display_name or title.endswith(display_name) else f"{title} — {display_name}"


def test_the_title_names_the_app_once(qtbot: Any, window: Any, ctx: Any, qapp: Any) -> None:
    from studio.core.models import parse_grader
    from studio.ui.main_window import APP_NAME

    previous = qapp.applicationDisplayName()
    qapp.setApplicationDisplayName(APP_NAME)  # as run_app sets it
    try:
        assert _shown_title(window.windowTitle(), APP_NAME).count(APP_NAME) == 1, window.windowTitle()
        assert window.windowTitle() == f"library.sqlite — {APP_NAME}"
        ctx.library.graders.create(parse_grader({"kind": "function", "key": "f", "name": "My grader",
                                                 "source": "async def grade(thread):\n    return 1.0\n"}))
        ctx.graders_changed.emit()
        window.open_grader("f")
        window.page.body.editor.setPlainText("async def grade(thread):\n    return 0.0\n")
        shown = _shown_title(window.windowTitle(), APP_NAME)
        assert shown == f"● My grader — library.sqlite — {APP_NAME}", shown
    finally:
        qapp.setApplicationDisplayName(previous)


def test_a_long_differing_line_wraps_in_the_diff(qtbot: Any) -> None:
    from studio.ui.library.versions import DiffView

    view = DiffView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    tail = "THE-END-OF-THE-LINE"
    long_old = "criteria: " + " ".join(f"word{n}" for n in range(120)) + " " + tail
    long_new = "criteria: " + "x" * 400 + tail  # a long token without a space wraps too
    assert view.show_diff("stored", f"key: a\n{long_old}\n", "yours", f"key: a\n{long_new}\n") == 1
    qtbot.waitUntil(lambda: view.table.rowHeight(1) > 0)
    table = view.table
    assert table.horizontalScrollBar().maximum() == 0, "nothing hides sideways"
    metrics = QtGui.QFontMetrics(table.font())
    for side, text in ((0, long_old), (1, long_new)):
        assert table.item(1, side).text() == text
        width = table.columnWidth(side)
        assert metrics.horizontalAdvance(text) > 3 * width, "the line is much wider than its column"
        # the row is as tall as the wrapped text needs: every character is on screen
        lines = -(-metrics.horizontalAdvance(text) // width)
        assert table.rowHeight(1) >= lines * metrics.lineSpacing(), (table.rowHeight(1), lines)
    assert table.rowHeight(0) < 2 * metrics.lineSpacing() + 8, "a short row stays one line"
    assert tail in view.text(0) and tail in view.text(1)


def test_the_generate_dialog_proposes_a_free_name_and_resumes_in_the_window(qtbot: Any, ctx: Any) -> None:
    """The proposal is never a dataset that exists (Generate would be refused); an unfinished
    generation is resumed with the dialog's own Resume button, and no CLI flag is advised."""
    from studio.core.demo import model_endpoint_config
    from studio.core.demo.fake_server import FakeJudgeServer
    from studio.core.models import Sample, Turn
    from studio.core.store.endpoints import EndpointRepository
    from studio.ui.datasets.generate import GenerateDialog

    samples = [Sample(id=f"s{n}", messages=[Turn(role="user", content=f"q{n}")]) for n in range(6)]
    ctx.library.datasets.create("qa", samples)
    for taken in ("qa-model-a", "qa-model-a-2"):
        ctx.library.datasets.create(taken, samples[:1])
    server = FakeJudgeServer(latency_ms=0).start()
    try:
        EndpointRepository.of(ctx.library).save(model_endpoint_config("model-a", "scripted-model-a", server.port))
        dialog = GenerateDialog(ctx, "qa")
        qtbot.addWidget(dialog)
        assert dialog.name.text() == "qa-model-a-3"
        assert not dialog.resume_button.isVisible()

        # a generation cancelled before it began: unfinished, resumable here
        import threading

        from studio.core.engine.generate import GenerationSettings, generate

        stop = threading.Event()
        stop.set()
        first = generate(ctx.library, "qa-model-a-3", GenerationSettings(source="qa", endpoint="model-a"), cancel=stop)
        assert first.status == "cancelled" and "--" not in first.reason, first.reason
        dialog.close()
        dialog = GenerateDialog(ctx, "qa")  # opened again: the proposal moves on, Resume waits for the name
        qtbot.addWidget(dialog)
        dialog.show()
        assert dialog.name.text() == "qa-model-a-4" and not dialog.resume_button.isVisible()
        dialog.name.setText("qa-model-a-3")
        assert dialog.resume_button.isVisible()
        with qtbot.waitSignal(dialog.generated, timeout=30_000):
            dialog.resume_button.click()
        assert dialog.generation.status == "complete" and dialog.generation.stored == 6, dialog.status.text()
        assert "--" not in dialog.status.text()
        assert ctx.library.datasets.get("qa-model-a-3").sample_count == 6
        assert not dialog.resume_button.isVisible()
    finally:
        server.stop()


def _shown_text(tree: QtWidgets.QTreeView, index: Any) -> str:
    """A row's text as the style paints it: elided to the text's room with the view's elide mode
    (QCommonStyle's viewItemDrawText: the item's text rect less a focus-frame margin each side)."""
    option = QtWidgets.QStyleOptionViewItem()
    tree.initViewItemOption(option)
    option.rect = tree.visualRect(index)
    tree.itemDelegateForIndex(index).initStyleOption(option, index)
    style = tree.style()
    rect = style.subElementRect(QtWidgets.QStyle.SubElement.SE_ItemViewItemText, option, tree)
    margin = style.pixelMetric(QtWidgets.QStyle.PixelMetric.PM_FocusFrameHMargin, None, tree) + 1
    return option.fontMetrics.elidedText(option.text, option.textElideMode, rect.width() - 2 * margin)


def test_five_names_that_differ_at_the_end_stay_distinguishable(qtbot: Any, window: Any, ctx: Any) -> None:
    from studio.core.models import parse_grader
    from studio.ui.library.model import RECORD_ROLE

    names = [f"Short answer (unit conversions, rounding to two places) {tail}"
             for tail in ("strict", "lenient", "v2", "v3", "final")]
    for n, name in enumerate(names):
        ctx.library.graders.create(parse_grader({"kind": "builtin", "key": f"short-{n}", "name": name,
                                                 "function": "exact_match"}))
    ctx.graders_changed.emit()
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.library.width() > 0)
    tree = window.library.tree
    rows = []
    proxy = tree.model()
    for g in range(proxy.rowCount()):
        group = proxy.index(g, 0)
        rows += [proxy.index(r, 0, group) for r in range(proxy.rowCount(group))]
    shown = {index.data(RECORD_ROLE).definition.name: _shown_text(tree, index) for index in rows}
    assert all(shown[name] != name for name in names), "the names are too long for the sidebar: elided"
    assert len({shown[name] for name in names}) == len(names), shown
    for name in names:
        assert shown[name].endswith(name.rsplit(" ", 1)[1]), shown[name]  # the distinguishing end is seen
        assert shown[name].startswith("Short")
    index = next(i for i in rows if i.data(RECORD_ROLE).definition.name == names[0])
    assert index.data(0x03).splitlines()[0] == names[0], "the tooltip has the name whole"  # ToolTipRole


def test_diff_lines_are_copied_as_text(qtbot: Any) -> None:
    from studio.ui.library.versions import DiffView

    view = DiffView()
    qtbot.addWidget(view)
    view.show_diff("a", "one\ntwo\nthree\n", "b", "one\n2\nthree\n")
    view.table.setRangeSelected(QtWidgets.QTableWidgetSelectionRange(1, 1, 2, 1), True)
    view.copy()
    assert QtWidgets.QApplication.clipboard().text() == "2\nthree"
