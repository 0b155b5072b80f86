"""Light and dark themes: the Fusion style, a palette, and a short stylesheet from resources/ui."""

from __future__ import annotations

from studio.core.paths import resources_dir

from .qt import QtGui, QtWidgets

THEMES = ("light", "dark")


def _dark_palette() -> QtGui.QPalette:
    p = QtGui.QPalette()
    role, color = QtGui.QPalette.ColorRole, QtGui.QColor
    for r, c in ((role.Window, "#23262d"), (role.WindowText, "#e5e7eb"), (role.Base, "#1b1d22"),
                 (role.AlternateBase, "#262a31"), (role.ToolTipBase, "#2d323b"), (role.ToolTipText, "#e5e7eb"),
                 (role.Text, "#e5e7eb"), (role.Button, "#2d323b"), (role.ButtonText, "#e5e7eb"),
                 (role.Highlight, "#2f5fb3"), (role.HighlightedText, "#ffffff"), (role.Link, "#60a5fa"),
                 (role.PlaceholderText, "#7b8290"), (role.Mid, "#3a3f48")):
        p.setColor(r, color(c))
    p.setColor(QtGui.QPalette.ColorGroup.Disabled, role.Text, color("#6b7280"))
    p.setColor(QtGui.QPalette.ColorGroup.Disabled, role.ButtonText, color("#6b7280"))
    return p


def apply_theme(app: QtWidgets.QApplication, theme: str) -> str:
    theme = theme if theme in THEMES else "light"
    app.setStyle("Fusion")
    app.setPalette(_dark_palette() if theme == "dark" else app.style().standardPalette())
    path = resources_dir() / "ui" / f"{theme}.qss"
    app.setStyleSheet(path.read_text(encoding="utf-8") if path.exists() else "")
    return theme
