"""``grader-studio`` and ``demo --open`` without a display: one sentence and exit 1, before Qt is
imported (Qt's own abort is exit 134 and blames libxcb-cursor0, installed or not)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.ui.display import no_display_reason
from tests.conftest import REPO

GONE = ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "QT_QPA_PLATFORM")


@pytest.mark.parametrize("args", [(), ("demo", "--open")])
def test_no_display_is_one_sentence_and_exit_1(tmp_path: Path, args: tuple[str, ...]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in GONE}
    env["GRADER_STUDIO_DB"] = str(tmp_path / "lib.sqlite")
    env["HOME"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "studio", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)
    assert done.returncode == 1, done
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "no display" in lines[0] and "xvfb-run" in lines[0] and "QT_QPA_PLATFORM=offscreen" in lines[0]
    assert "libxcb" not in done.stderr and "Traceback" not in done.stderr


def test_which_environments_have_a_display() -> None:
    assert no_display_reason({}, "linux") is not None
    assert "DISPLAY is not set" in (no_display_reason({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "w"}, "linux") or "")
    assert no_display_reason({"DISPLAY": ":0"}, "linux") is None
    assert no_display_reason({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert no_display_reason({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert no_display_reason({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":1"}, "linux") is None
    assert no_display_reason({}, "darwin") is None and no_display_reason({}, "win32") is None
