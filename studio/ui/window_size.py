"""The main window's first size: from the screen it opens on, never larger than that screen.

A fixed first size (it was 1440x900) puts the right and bottom edges off a 1280x800 laptop screen.
The first window takes most of the screen's available geometry (the screen less its panels and
docks), capped at a comfortable size on a large monitor, and is centred there. A saved geometry
is restored only when it fits the screen the window will open on; a geometry saved on a larger or
since unplugged monitor gives way to the first-launch size.
"""

from __future__ import annotations

from .qt import QtCore, QtGui, QtWidgets

#: on a large monitor the first window stops growing here: a page is read, not spread across 4K
COMFORTABLE = QtCore.QSize(1600, 1000)
#: share of a small screen the first window takes, so its edges and the panel stay visible
SHARE = 0.94
#: the window manager's frame (borders and a title bar) before the window is shown and it is known
FRAME_GUESS = QtCore.QMargins(8, 32, 8, 8)


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
    """A window ``frame`` lies on the screen area ``area``."""
    return area.contains(frame)


def _frame_extra(window: QtWidgets.QWidget) -> QtCore.QSize:
    if window.isVisible():
        return window.frameGeometry().size() - window.geometry().size()
    return QtCore.QSize(FRAME_GUESS.left() + FRAME_GUESS.right(), FRAME_GUESS.top() + FRAME_GUESS.bottom())


def _frame_of(window: QtWidgets.QWidget) -> QtCore.QRect:
    """The window's frame on screen: known once shown, guessed around its geometry before."""
    return window.frameGeometry() if window.isVisible() else window.geometry().marginsAdded(FRAME_GUESS)


def place_first(window: QtWidgets.QWidget) -> None:
    area = available_geometry(window)
    frame = _frame_extra(window)
    size = first_size(area).boundedTo(area.size() - frame)
    size = size.expandedTo(window.minimumSize())
    window.resize(size)
    # move() places the frame's top left corner
    window.move(area.left() + (area.width() - size.width() - frame.width()) // 2,
                area.top() + (area.height() - size.height() - frame.height()) // 2)
    _FitOnShow.watch(window)


class _FitOnShow(QtCore.QObject):
    """Once the window is shown and its real frame known, pull it back inside the screen if the
    frame hangs over (a taller title bar than guessed)."""

    @classmethod
    def watch(cls, window: QtWidgets.QWidget) -> None:
        if window.findChild(cls) is None:
            window.installEventFilter(cls(window))

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802
        if event.type() == QtCore.QEvent.Type.Show and isinstance(watched, QtWidgets.QWidget):
            watched.removeEventFilter(self)
            QtCore.QTimer.singleShot(0, lambda w=watched: fit_inside(w))
            self.deleteLater()
        return False


def fit_inside(window: QtWidgets.QWidget) -> None:
    """Shrink and move a shown window so that its frame lies on its screen's available area."""
    try:
        if not window.isVisible() or window.isMaximized() or window.isFullScreen():
            return
    except RuntimeError:  # closed before the timer fired
        return
    area = available_geometry(window)
    frame = window.frameGeometry()
    if fits(frame, area):
        return
    extra = _frame_extra(window)
    size = window.size().boundedTo(area.size() - extra).expandedTo(window.minimumSize())
    window.resize(size)
    right, bottom = area.left() + area.width(), area.top() + area.height()
    window.move(max(area.left(), min(frame.left(), right - size.width() - extra.width())),
                max(area.top(), min(frame.top(), bottom - size.height() - extra.height())))


def restore_geometry(window: QtWidgets.QWidget, saved: object) -> None:
    """Restore ``saved`` (a ``saveGeometry()`` blob) when it fits the current screen, else size afresh.
    ``saved`` is what QSettings gives back: anything else there (a hand-edited settings file) is no
    geometry, and the window is sized afresh rather than refused."""
    if isinstance(saved, QtCore.QByteArray | bytes | bytearray) and window.restoreGeometry(saved):
        area = available_geometry(window)
        if window.isMaximized() or fits(_frame_of(window), area):
            _FitOnShow.watch(window)
            return
        window.setWindowState(window.windowState() & ~QtCore.Qt.WindowState.WindowMaximized)
    place_first(window)
