"""Icons shipped in ``resources/ui/icons`` (SVG), loaded once."""

from __future__ import annotations

from functools import cache

from studio.core.paths import resources_dir

from .qt import QtGui


@cache
def icon(name: str) -> QtGui.QIcon:
    path = resources_dir() / "ui" / "icons" / f"{name}.svg"
    return QtGui.QIcon(str(path)) if path.exists() else QtGui.QIcon()


def kind_icon(kind: str) -> QtGui.QIcon:
    if kind == "function":
        return icon("code")
    if kind.endswith("_judge") or kind == "prebuilt":
        return icon("judge")
    return icon("grader")
