"""The one place the studio imports Qt from (qutebrowser's habit): swap or pin bindings here only."""

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, Slot

__all__ = ["QObject", "QRunnable", "QThreadPool", "QTimer", "Qt", "QtCore", "QtGui", "QtWidgets", "Signal", "Slot"]
