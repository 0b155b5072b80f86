"""What the sandbox reports about itself, measured by a real worker."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from studio.cli import main as cli_main
from studio.core.sandbox import sandbox_info
from studio.core.sandbox.settings import SandboxSettings

linux_with_bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="needs bubblewrap"
)


@linux_with_bwrap
def test_bubblewrap_protections_are_all_active() -> None:
    info = sandbox_info()
    assert info.mode == "bubblewrap"
    active = {p.name: p.active for p in info.protections}
    for name in ("network", "filesystem", "environment", "processes", "unprivileged uid", "seccomp", "rlimits"):
        assert active[name], (name, info)
    assert info.os_enforced and not info.warnings
    assert info.worker_uid not in (None, 0)


def test_limits_only_mode_says_what_is_missing() -> None:
    info = sandbox_info(SandboxSettings(mode="limits_only"))
    active = {p.name: p.active for p in info.protections}
    assert active["environment"] and not active["network"] and not active["filesystem"]
    assert any("no OS isolation" in w for w in info.warnings)


def test_cli_sandbox_info_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["sandbox-info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] in ("bubblewrap", "namespaces", "limits_only")
    assert {p["name"] for p in data["protections"]} >= {"network", "filesystem", "rlimits"}


def test_cli_sandbox_info_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["sandbox-info"]) == 0
    out = capsys.readouterr().out
    assert "isolation:" in out and "protection" in out
