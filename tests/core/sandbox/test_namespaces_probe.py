"""Where the kernel refuses the namespaces fallback's mounts (many containers), the studio finds out
once, says why in ``sandbox-info`` (and the window's status bar), does not claim the mode, and the
fallback's tests skip with that reason, except in CI, where they stay required."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from namespaces_fallback import require_namespaces
from no_bwrap import path_without_bwrap

from studio.cli import main as cli_main
from studio.core.sandbox import info as info_module
from studio.core.sandbox import launch
from studio.core.sandbox.settings import SandboxSettings

REFUSAL = "unshare: mount /proc failed: Operation not permitted"


def _clear() -> None:
    launch.namespaces_unavailable.cache_clear()
    launch.detect_mode.cache_clear()
    info_module.sandbox_info.cache_clear()


@pytest.fixture
def refusing_kernel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """unshare starts, then a mount is refused, as in a stock container; and no bubblewrap."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the namespaces fallback is Linux's")
    fake = [sys.executable, "-c", f"import sys; sys.stderr.write({REFUSAL!r} + '\\n'); sys.exit(1)"]
    monkeypatch.setattr(launch, "_unshare_prefix", lambda: list(fake))
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    _clear()
    yield
    _clear()


def test_the_probe_names_the_refusal_and_the_mode_is_not_claimed(refusing_kernel: None, capsys) -> None:  # type: ignore[no-untyped-def]
    reason = launch.namespaces_unavailable()
    assert reason is not None and REFUSAL in reason
    assert launch.detect_mode() == "limits_only"  # not "namespaces": it would not start

    info = info_module.sandbox_info(SandboxSettings(allow_unsandboxed=True))
    assert info.namespaces_fallback == f"unavailable: {reason}"
    assert any(REFUSAL in w and "namespaces fallback" in w for w in info.warnings), info.warnings

    info_module.sandbox_info.cache_clear()
    assert cli_main(["sandbox-info"]) in (0, 1)
    out = capsys.readouterr().out
    assert f"namespaces fallback: unavailable: {reason}" in out
    assert cli_main(["sandbox-info", "--json"]) in (0, 1)
    assert REFUSAL in json.loads(capsys.readouterr().out)["namespaces_fallback"]


def test_the_fallbacks_tests_skip_with_the_reason_but_fail_in_ci(refusing_kernel: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Operation not permitted"):
        require_namespaces()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run"):
        require_namespaces()


def test_the_probe_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear()
    calls: list[list[str]] = []
    real = launch.subprocess.run

    def counting(argv, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(argv)
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(launch.subprocess, "run", counting)
    first = launch.namespaces_unavailable()
    assert launch.namespaces_unavailable() == first
    assert len(calls) <= 1
    _clear()
