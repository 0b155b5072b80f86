"""The window never grows past a 1280x800 or a 1366x768 screen, whatever page, tab, grader or run it
shows (issue 35). Each size is its own process: the offscreen platform's screen is set when the
application starts (``QT_QPA_PLATFORM=offscreen:configfile=...``), and ``walk_window_states.py``
walks the states there, failing on the first that grows the window and naming the widget why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SIZES = [(1280, 800), (1366, 768)]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_state_grows_the_window_past_the_screen(tmp_path: Path, size: tuple[int, int]) -> None:
    width, height = size
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": width, "height": height,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "WALK_SCREEN": f"{width}x{height}"}
    done = subprocess.run([sys.executable, "-m", "pytest", str(HERE / "walk_window_states.py"), "-q", "-x",
                           "-p", "no:cacheprovider", "-o", "addopts=", "--timeout", "840",
                           "--basetemp", str(tmp_path / "walk")],
                          capture_output=True, text=True, env=env, timeout=880, cwd=HERE.parents[1])
    assert done.returncode == 0, f"at {width}x{height}:\n" + done.stdout[-6000:] + done.stderr[-2000:]
