"""Where the studio's shipped resources are: the repo's ``resources/`` or a frozen app's copy."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)  # PyInstaller unpacks data files here
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def demo_dir() -> Path:
    return resources_dir() / "demo"
