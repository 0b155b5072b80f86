"""The window's first paint does not wait for what only the agreement and compare pages need
(pyqtgraph, scipy): those pages are built, and their modules imported, when first opened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import sys
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication(sys.argv)
from studio.ui.app import run_app

def painted():
    window = [w for w in app.topLevelWidgets() if w.isVisible()][0]
    heavy = [m for m in ("pyqtgraph", "scipy") if m in sys.modules]
    tabs = window.tabs
    tabs.setCurrentIndex(tabs.indexOf(window.agreement_tab))  # opening the page builds it
    built = window.agreement_tab.built and "pyqtgraph" in sys.modules
    print(heavy, built, flush=True)
    app.quit()

QtCore.QTimer.singleShot(0, painted)
run_app(__import__("pathlib").Path(sys.argv[1]))
"""


def test_the_first_paint_imports_neither_pyqtgraph_nor_scipy(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GRADER_STUDIO_DB": str(tmp_path / "lib.sqlite")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "lib.sqlite")], env=env, capture_output=True,
                         text=True, timeout=120).stdout
    assert "[] True" in out, out
