"""The one place the window imports pyqtgraph (after our Qt binding, so it draws with PySide6).

Why pyqtgraph and not QtCharts: QtCharts ships in PySide6's add-ons wheel, not in
``pyside6-essentials`` (which we depend on to keep the app small); pyqtgraph is pure Python over
the Qt we already load, well kept, and fast for scatter plots of many thousand points.
"""

from __future__ import annotations

import pyqtgraph as pg  # noqa: E402

from .qt import QtCore  # noqa: F401  (import order: our binding first)

pg.setConfigOptions(antialias=True, background="w", foreground="#30343b")

__all__ = ["pg"]
