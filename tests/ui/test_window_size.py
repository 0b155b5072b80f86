"""restore_geometry takes what QSettings gives back, whatever it is (ui/window_size.py)."""

from __future__ import annotations

from typing import Any

import pytest

from studio.ui.qt import QtWidgets
from studio.ui.window_size import restore_geometry


@pytest.mark.parametrize("saved", ["not a geometry", 7, ["a", "list"]])
def test_a_saved_value_that_is_no_geometry_sizes_the_window_afresh(qtbot: Any, saved: object) -> None:
    """A hand-edited settings file (``geometry=junk``) gives back a string, not a QByteArray: the
    window opens at its first size instead of failing on restoreGeometry's TypeError (the type
    ``object`` on ``saved``, once ``Any``, showed the call took anything)."""
    fresh, window = QtWidgets.QWidget(), QtWidgets.QWidget()
    qtbot.addWidget(fresh)
    qtbot.addWidget(window)
    restore_geometry(fresh, None)
    restore_geometry(window, saved)
    assert window.size() == fresh.size() and window.size().width() > 0


def test_a_saved_geometry_is_restored(qtbot: Any) -> None:
    first = QtWidgets.QWidget()
    qtbot.addWidget(first)
    first.setGeometry(100, 100, 420, 300)  # well inside the (offscreen) screen
    first.show()
    qtbot.waitExposed(first)
    saved = first.saveGeometry()
    window = QtWidgets.QWidget()
    qtbot.addWidget(window)
    restore_geometry(window, saved)
    assert (window.width(), window.height()) == (420, 300)
