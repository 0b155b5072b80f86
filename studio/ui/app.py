"""Placeholder window until the studio window lands."""

from __future__ import annotations

import sys
from pathlib import Path


def run_app(db_path: Path, *, serve_demo_judge: bool = False) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication.instance() or QApplication(sys.argv)
    label = QLabel(f"Grader Studio — library {db_path}")
    label.resize(640, 200)
    label.show()
    return app.exec()
