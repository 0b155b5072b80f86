"""The one place the studio imports Qt from (qutebrowser's habit): swap or pin bindings here only."""

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, Slot

__all__ = ["QObject", "QRunnable", "QThreadPool", "QTimer", "Qt", "QtCore", "QtGui", "QtWidgets", "Signal", "Slot",
           "tool_button"]


def tool_button(text: str, tip: str = "") -> QtWidgets.QToolButton:
    """A tool button showing ``text``, with ``tip`` as its tooltip. (PySide6 takes both as keyword
    properties, ``QToolButton(text=...)``, but its stubs declare no such keywords.)"""
    button = QtWidgets.QToolButton()
    button.setText(text)
    if tip:
        button.setToolTip(tip)
    return button
