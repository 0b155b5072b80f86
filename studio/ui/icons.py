"""Icons: our SVGs in ``resources/ui/icons`` and, for grader kinds, Material Design Icons via qtawesome.

Each kind family gets its own clear glyph and colour (code, judge's scales, a rule, a terminal, a
stack, a network endpoint) so the library never shows a kind as a ticked checkbox.
"""

from __future__ import annotations

import os
from functools import cache

from studio.core.paths import resources_dir

from .qt import QtGui

os.environ.setdefault("QT_API", "pyside6")  # qtawesome goes through qtpy: the binding we already use

#: kind -> (Material Design icon, colour); a kind not listed gets the generic glyph
KIND_GLYPHS: dict[str, tuple[str, str]] = {
    "function": ("mdi6.language-python", "#3b6fb6"),
    "binary_judge": ("mdi6.scale-balance", "#7b4fb0"),
    "range_judge": ("mdi6.scale-balance", "#7b4fb0"),
    "rubric_judge": ("mdi6.scale-balance", "#7b4fb0"),
    "criteria_judge": ("mdi6.scale-balance", "#7b4fb0"),
    "prebuilt": ("mdi6.scale-balance", "#7b4fb0"),
    "builtin": ("mdi6.function-variant", "#2f8a5b"),
    "bash": ("mdi6.console", "#b5651d"),
    "composite": ("mdi6.layers-triple-outline", "#0f7c8c"),
    "external_endpoint": ("mdi6.web", "#c0392b"),
}
GENERIC_GLYPH = ("mdi6.file-document-outline", "#5b6170")


@cache
def icon(name: str) -> QtGui.QIcon:
    path = resources_dir() / "ui" / "icons" / f"{name}.svg"
    return QtGui.QIcon(str(path)) if path.exists() else QtGui.QIcon()


@cache
def kind_icon(kind: str) -> QtGui.QIcon:
    import qtawesome

    glyph, colour = KIND_GLYPHS.get(kind, GENERIC_GLYPH)
    return qtawesome.icon(glyph, color=colour)
