"""The studio window (PySide6). Only this package imports Qt."""

from __future__ import annotations

from pathlib import Path


def launch(db_path: Path, *, serve_demo_judge: bool = False) -> int:
    from .app import run_app

    return run_app(db_path, serve_demo_judge=serve_demo_judge)
