"""A window on a screen of a given size (the test sets QT_QPA_PLATFORM=offscreen:configfile=...):
prints its frame and the screen's available geometry as JSON.

    screen_child.py LIBRARY SETTINGS [save|restore]

``save`` moves the window to the bottom right part of the screen and saves its geometry as closing
does; ``restore`` opens with the saved one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from studio.core.store import Library
from studio.ui.context import AppContext
from studio.ui.main_window import MainWindow
from studio.ui.qt import QtCore, QtWidgets


def main() -> int:
    app = QtWidgets.QApplication(sys.argv[:1])
    db, ini = Path(sys.argv[1]), sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else ""
    settings = QtCore.QSettings(ini, QtCore.QSettings.Format.IniFormat)
    if mode != "restore":
        settings.remove("window/geometry")
    ctx = AppContext(Library.open(db), db, settings)
    window = MainWindow(ctx, check_sandbox=False)
    window.show()
    app.processEvents()
    if mode == "save":
        area = window.screen().availableGeometry()
        window.setGeometry(area.left() + 100, area.top() + 80, area.width() - 200, area.height() - 160)
        app.processEvents()
        window.save_state()
        settings.sync()
    frame = window.frameGeometry()
    area = window.screen().availableGeometry()
    print(json.dumps({"frame": [frame.x(), frame.y(), frame.width(), frame.height()],
                      "available": [area.x(), area.y(), area.width(), area.height()]}))
    window.hide()  # not close(): closing saves the geometry, and only "save" should
    ctx.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
