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


def is_frozen() -> bool:
    """Is this the standalone app (a PyInstaller bundle) rather than a pip-installed studio?"""
    return bool(getattr(sys, "frozen", False))


def extra_hint(what: str, extra: str, purpose: str) -> str:
    """How to get an optional extra the standalone app leaves out (Ray, llama.cpp), as a sentence.

    A pip-installed studio adds the extra to its environment; the bundle cannot take packages, so
    its user is sent to the pip-installed studio instead.
    """
    command = f"pip install 'grader-studio[{extra}]'"
    if is_frozen():
        return (f"{what} is not part of the standalone app: to {purpose}, install Grader Studio with "
                f" {command}  and run it from that Python environment.")
    return f"{what} is not installed here: install the extra with  {command}  to {purpose}."
