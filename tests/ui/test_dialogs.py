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


def test_settings_endpoint_proxy_ca_bundle_and_azure_fields(
    qtbot: Any, window: Any, ctx: Any, memory_keyring: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    """The proxy, CA bundle and Azure api-version fields are saved on the endpoint, shown again,
    and a Test on a wrong port says what went wrong in words, with the route it took."""
    from judge_helpers import without_proxy_variables

    from studio.core.store.endpoints import EndpointRepository

    without_proxy_variables(monkeypatch)
    dialog = window.settings()
    qtbot.addWidget(dialog)
    page = dialog.endpoints
    page.add_button.click()
    page.name.setText("azure-judge")
    page.kind.setCurrentText("azure")
    page.base_url.setText("https://resource.openai.azure.com")
    page.model.setText("grader-deployment")
    page.api_version.setText("2024-10-21")
    page.proxy.setText("http://proxy.corp:3128")
    import certifi

    page.ca_bundle.setText(certifi.where())
    assert page.save()
    config = EndpointRepository.of(ctx.library).get("azure-judge")
    assert (config.kind, config.api_version, config.proxy, config.ca_bundle) == (
        "azure", "2024-10-21", "http://proxy.corp:3128", certifi.where())
    page._new()
    assert page.proxy.text() == ""
    page.reload(select="azure-judge")
    assert page.api_version.text() == "2024-10-21" and page.proxy.text() == "http://proxy.corp:3128"

    # issue 33 item 12: a Test on a wrong URL, said in words
    page.add_button.click()
    page.name.setText("wrong-port")
    page.kind.setCurrentText("openai")
    page.base_url.setText("http://127.0.0.1:9/v1")
    page.model.setText("m")
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=15_000)
    said = page.result.text()
    assert "connection refused (is the server running" in said, said
    assert "Errno" not in said and "ConnectionRefusedError" not in said
    assert "route: direct connection (no proxy)" in said
