"""The main window's first size: from the screen it opens on, never larger than that screen.

A fixed first size (it was 1440x900) puts the right and bottom edges off a 1280x800 laptop screen.
The first window takes most of the screen's available geometry (the screen less its panels and
docks), capped at a comfortable size on a large monitor, and is centred there. A saved geometry
is restored only when it fits the screen the window will open on; a geometry saved on a larger or
since unplugged monitor gives way to the first-launch size.
"""

from __future__ import annotations

from typing import Any

from .qt import QtCore, QtGui, QtWidgets

#: on a large monitor the first window stops growing here: a page is read, not spread across 4K
COMFORTABLE = QtCore.QSize(1600, 1000)
#: share of a small screen the first window takes, so its edges and the panel stay visible
SHARE = 0.94


def available_geometry(window: QtWidgets.QWidget) -> QtCore.QRect:
    """The usable area of the screen the window is on (the primary screen before it is shown)."""
    screen = window.screen() or QtGui.QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QtCore.QRect(0, 0, 1280, 800)


def first_size(area: QtCore.QRect) -> QtCore.QSize:
    """The first window's size on a screen whose available area is ``area``."""
    if area.width() <= COMFORTABLE.width() or area.height() <= COMFORTABLE.height():
        # a laptop: use the screen (a page needs the room), less a margin so the frame shows
        width = area.width() if area.width() <= 1366 else int(area.width() * SHARE)
        height = area.height() if area.height() <= 800 else int(area.height() * SHARE)
        return QtCore.QSize(min(width, COMFORTABLE.width()), min(height, COMFORTABLE.height()))
    return QtCore.QSize(COMFORTABLE)


def fits(frame: QtCore.QRect, area: QtCore.QRect) -> bool:
    """A saved window ``frame`` lies on the screen area ``area`` (a few pixels of frame may hang over)."""
    slack = 8
    return area.adjusted(-slack, -slack, slack, slack).contains(frame)


def place_first(window: QtWidgets.QWidget) -> None:
    area = available_geometry(window)
    size = first_size(area).boundedTo(area.size())
    size = size.expandedTo(window.minimumSize())
    window.resize(size)
    window.move(area.left() + (area.width() - size.width()) // 2, area.top() + (area.height() - size.height()) // 2)


def restore_geometry(window: QtWidgets.QWidget, saved: Any) -> None:
    """Restore ``saved`` (a ``saveGeometry()`` blob) when it fits the current screen, else size afresh."""
    if saved is not None and window.restoreGeometry(saved):
        area = available_geometry(window)
        if window.isMaximized() or fits(window.frameGeometry() if window.isVisible() else window.geometry(), area):
            return
        window.setWindowState(window.windowState() & ~QtCore.Qt.WindowState.WindowMaximized)
    place_first(window)
