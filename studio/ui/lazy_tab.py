"""A tab whose page is built the first time it is needed, so its imports wait for that moment.

The agreement and compare pages draw with pyqtgraph and compute with scipy: over a second of
imports a person pays only when they open one, not before the window's first paint.
"""

from __future__ import annotations

from collections.abc import Callable

from .qt import QtWidgets


class LazyTab(QtWidgets.QWidget):
    def __init__(self, build: Callable[[], QtWidgets.QWidget]) -> None:
        super().__init__()
        self._build = build
        self._page: QtWidgets.QWidget | None = None
        self._layout = QtWidgets.QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    @property
    def built(self) -> bool:
        return self._page is not None

    @property
    def page(self) -> QtWidgets.QWidget:
        """The page, built on first use."""
        if self._page is None:
            self._page = self._build()
            self._layout.addWidget(self._page)
        return self._page
