"""The export dialog's preview and the settings' endpoints (keyring for the key, Test against a real server)."""

from __future__ import annotations

from typing import Any

from studio.ui.library.starters import starter


def test_export_dialog_previews_the_files(qtbot: Any, window: Any, ctx: Any, messages: Any, tmp_path: Any) -> None:
    from studio.ui.dialogs.export import ExportDialog

    definition = starter("builtin", "exact")
    dialog = ExportDialog(ctx, definition, messages)
    qtbot.addWidget(dialog)
    found = False
    for i in range(dialog.platform.count()):
        dialog.platform.setCurrentIndex(i)
        if "cannot" in dialog.platform.currentText():
            continue
        qtbot.waitUntil(lambda: dialog.file_list.count() > 0 or "cannot" in dialog.support.text(), timeout=5000)
        if dialog.file_list.count():
            found = True
            break
    assert found, "at least one platform exports a built-in grader"
    text = dialog.preview.currentWidget().toPlainText()
    assert text.strip()
    messages.directory = str(tmp_path / "out")
    dialog.save()
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written and "Wrote" in dialog.notes.text()
    dialog.copy()


def test_settings_add_endpoint_and_test_it(qtbot: Any, window: Any, ctx: Any, memory_keyring: Any) -> None:
    from studio.core.demo.fake_server import FakeJudgeServer
    from studio.core.store.endpoints import EndpointRepository

    dialog = window.settings()
    qtbot.addWidget(dialog)
    page = dialog.endpoints
    assert page is not None
    with FakeJudgeServer() as server:
        page.add_button.click()
        page.name.setText("local-judge")
        page.base_url.setText(server.base_url)
        page.model.setText("fake-judge")
        page.api_key.setText("sk-secret-123")
        assert page.save()
        config = EndpointRepository.of(ctx.library).get("local-judge")
        assert config.base_url == server.base_url
        assert memory_keyring.store[("grader-studio", "local-judge")] == "sk-secret-123"
        raw = ctx.library.engine.raw_connection()
        try:
            dump = "\n".join(raw.iterdump())
        finally:
            raw.close()
        assert "sk-secret-123" not in dump, "the key never reaches the library file"
        page.test_button.click()
        qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=15_000)
        assert "Answered" in page.result.text(), page.result.text()
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    assert ctx.settings.value("ui/theme") == "dark"
    dialog.theme.setCurrentIndex(dialog.theme.findData("light"))
