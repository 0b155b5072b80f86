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


@pytest.mark.slow  # ~18 s a size on two cores: in the slow suite, which .ci/run runs too
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


def test_the_walk_names_the_widget_whose_minimum_widens_the_window(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The checker itself: a button deep in a row of a page in a stack is named, with the width it asks."""
    from window_growth import explain

    from studio.ui.qt import QtWidgets

    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    stack = QtWidgets.QStackedWidget()
    page = QtWidgets.QWidget()
    page.toolbar = QtWidgets.QWidget(page)  # type: ignore[attr-defined]
    row = QtWidgets.QHBoxLayout(page.toolbar)  # type: ignore[attr-defined]
    wide = QtWidgets.QPushButton("Align judge…")
    wide.setMinimumWidth(1500)
    row.addWidget(QtWidgets.QLabel("Run"))
    row.addWidget(wide)
    QtWidgets.QVBoxLayout(page).addWidget(page.toolbar)  # type: ignore[attr-defined]
    stack.addWidget(QtWidgets.QLabel("another page"))
    stack.addWidget(page)  # a hidden page of a stack counts: the stack is as wide as its widest
    window.setCentralWidget(stack)
    text = explain(window)
    assert "QPushButton 'Align judge…' 1500" in text and "QWidget.toolbar" in text, text
