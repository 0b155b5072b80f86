"""Icons: our SVGs in ``resources/ui/icons`` and, for grader kinds, Material Design Icons via qtawesome.

Each kind declares its own clear glyph and colour (``Kind.icon``: code, judge's scales, a rule, a
terminal, a stack, a network endpoint) so the library never shows a kind as a ticked checkbox.
"""

from __future__ import annotations

import os
from functools import cache

from studio.core.kinds import GENERIC_ICON, UnknownKind, get_kind
from studio.core.paths import resources_dir

from .qt import QtGui

os.environ.setdefault("QT_API", "pyside6")  # qtawesome goes through qtpy: the binding we already use

@cache
def icon(name: str) -> QtGui.QIcon:
    path = resources_dir() / "ui" / "icons" / f"{name}.svg"
    return QtGui.QIcon(str(path)) if path.exists() else QtGui.QIcon()


@cache
def kind_icon(kind: str) -> QtGui.QIcon:
    import qtawesome

    try:
        glyph, colour = get_kind(kind).icon
    except UnknownKind:  # a stored grader of a kind no module declares any more
        glyph, colour = GENERIC_ICON
    made: QtGui.QIcon = qtawesome.icon(glyph, color=colour)  # (qtawesome is untyped)
    return made
