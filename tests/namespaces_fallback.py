"""The namespaces fallback's tests need a kernel that allows its mounts: where it refuses them (many
containers) they skip with the reason the studio itself reports (``sandbox-info``), except in CI
(``CI=true``), where the fallback works and must stay checked: there an unavailable fallback fails."""

from __future__ import annotations

import os

import pytest

from studio.core.sandbox.launch import namespaces_unavailable


def require_namespaces() -> None:
    """Skip (fail in CI) when the namespaces fallback cannot run on this machine, saying why."""
    reason = namespaces_unavailable()
    if reason is None:
        return
    message = f"the namespaces fallback is unavailable here: {reason}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI must run the fallback's checks)")
    pytest.skip(message)
