"""A score histogram painted with QPainter: bars of counts per score bucket, a tooltip per bar."""

from __future__ import annotations

from ..qt import Qt, QtCore, QtGui, QtWidgets


class ScoreHistogram(QtWidgets.QWidget):
    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.bins: list[int] = []
        self.low = 0.0
        self.high = 1.0
        self.setMinimumSize(220, 72)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(320, 84)

    def set_data(self, bins: list[int], low: float, high: float) -> None:
        self.bins, self.low, self.high = list(bins), low, high
        self.update()

    def total(self) -> int:
        return sum(self.bins)

    def _plot(self) -> QtCore.QRectF:
        return QtCore.QRectF(self.rect()).adjusted(6, 4, -6, -16)

    def bucket_at(self, x: float) -> int | None:
        plot = self._plot()
        if not self.bins or not plot.left() <= x <= plot.right():
            return None
        return min(len(self.bins) - 1, int((x - plot.left()) / plot.width() * len(self.bins)))

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        palette = self.palette()
        plot = self._plot()
        muted = palette.color(QtGui.QPalette.ColorRole.PlaceholderText)
        painter.setPen(muted)
        if not self.bins or self.total() == 0:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No scores yet")
            return
        peak = max(self.bins)
        width = plot.width() / len(self.bins)
        bar = QtGui.QColor(palette.color(QtGui.QPalette.ColorRole.Highlight))
        for i, count in enumerate(self.bins):
            if not count:
                continue
            height = max(1.0, plot.height() * count / peak)
            painter.fillRect(QtCore.QRectF(plot.left() + i * width + 1, plot.bottom() - height,
                                           max(1.0, width - 2), height), bar)
        painter.setPen(muted)
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        font = painter.font()
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        painter.setFont(font)
        labels = QtCore.QRectF(plot.left(), plot.bottom() + 1, plot.width(), 14)
        painter.drawText(labels, Qt.AlignmentFlag.AlignLeft, f"{self.low:g}")
        painter.drawText(labels, Qt.AlignmentFlag.AlignRight, f"{self.high:g}")
        painter.drawText(labels, Qt.AlignmentFlag.AlignHCenter, f"{self.total():,} scored")

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip:
            bucket = self.bucket_at(event.pos().x())  # type: ignore[attr-defined]
            if bucket is not None:
                step = (self.high - self.low) / len(self.bins)
                lo = self.low + bucket * step
                QtWidgets.QToolTip.showText(event.globalPos(),  # type: ignore[attr-defined]
                                            f"{lo:.3g} – {lo + step:.3g}: {self.bins[bucket]:,}", self)
            else:
                QtWidgets.QToolTip.hideText()
            return True
        return super().event(event)
