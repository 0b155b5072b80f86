"""Colours and labels of result and run statuses, shared by the grid, the run list and the summary."""

from __future__ import annotations

from functools import cache

from ..qt import QtGui

#: foreground colours chosen to read on light and dark backgrounds alike
STATUS_COLOURS: dict[str, str] = {
    "ok": "#2e9d4f",
    "completed": "#2e9d4f",
    "error": "#d64541",
    "failed": "#d64541",
    "invalid": "#e08a1e",
    "cancelled": "#e08a1e",
    "interrupted": "#e08a1e",
    "stopped": "#e08a1e",
    "skipped": "#8a8f98",
    "pending": "#8a8f98",
    "running": "#3b7dd8",
}

STATUS_ORDER = ("ok", "invalid", "error", "skipped")


def status_hex(status: str) -> str:
    return STATUS_COLOURS.get(status, "#8a8f98")


@cache
def status_colour(status: str) -> QtGui.QColor:
    return QtGui.QColor(status_hex(status))


@cache
def status_tint(status: str) -> QtGui.QColor:
    """A faint fill for a status cell: enough to scan a column, never enough to hide the text."""
    colour = QtGui.QColor(status_hex(status))
    colour.setAlpha(38)
    return colour
