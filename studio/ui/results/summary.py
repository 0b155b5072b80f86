"""The band above the grid: which run this is, its aggregates, and the score histogram."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from studio.core.engine.summary import rate_interval_text
from studio.core.store.results_query import RunSummary

from ..plain import breakable, short
from ..qt import Qt, QtGui, QtWidgets
from .ci_reports import figures_html
from .histogram import ScoreHistogram
from .status import STATUS_ORDER, status_hex

if TYPE_CHECKING:
    from studio.core.engine.summary import GraderSummary


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None else format(value, spec)


def aggregates_html(summary: RunSummary) -> str:
    """The band's text. A finished run's figures are its one summary's (``RunFigures.run``: the
    engine's, as ``run`` prints them); a live run's are the aggregates its progress refreshes."""
    run, agg = summary.run, summary.aggregates
    sections = getattr(summary.figures, "run", None)
    if sections is not None:
        agg = agg.updated(sections.figures())
    title = (f"<b>Run {run.id}</b> · {html.escape(short(run.label))} on "
             f"{html.escape(short(run.dataset))} · <span style='color:{status_hex(run.status)}'>{run.status}</span>"
             f" · {run.done:,}/{run.total:,}")
    threshold = agg.pass_threshold
    interval = "" if agg.mean_ci is None else (
        f" <span style='color:#8a8f98'>[{agg.mean_ci[0]:.4f}, {agg.mean_ci[1]:.4f}]</span>")
    headline = (f"mean <b>{_fmt(agg.mean, '.4f')}</b>{interval} &nbsp; pass rate "
                f"{_rate_html(agg.pass_rate, agg.pass_rate_ci)} <span style='color:#8a8f98'>(≥ {threshold:g})</span>")
    if agg.n is not None:
        headline += f" &nbsp; n {agg.n:,}"
    if agg.score_min is not None:
        headline += f" &nbsp; range {_fmt(agg.score_min, '.3g')}–{_fmt(agg.score_max, '.3g')}"
    statuses = agg.statuses or run.counts or {}
    ordered = [s for s in STATUS_ORDER if s in statuses] + sorted(s for s in statuses if s not in STATUS_ORDER)
    chips = " &nbsp; ".join(
        f"<span style='color:{status_hex(s)}; font-weight:600'>{html.escape(s)} {statuses[s]:,}</span>"
        for s in ordered)
    extra = []
    if agg.mean_duration_ms is not None:
        extra.append(f"{agg.mean_duration_ms:.0f} ms/sample")
    if agg.tokens:
        extra.append(f"{agg.tokens:,} tokens")
    if agg.cached:
        extra.append(f"{agg.cached:,} cached")
    metrics = agg.metrics
    shown = {k: v for k, v in metrics.items() if not (k == "score" and len(metrics) == 1)}
    metric_line = " &nbsp; ".join(f"{html.escape(short(k, 60))} <b>{_fmt(v)}</b>" for k, v in sorted(shown.items()))
    lines = [title, headline + (" &nbsp; " + chips if chips else "")]
    if sections is not None and sections.suite:  # each grader's own line, as ``run`` prints it
        lines += [grader_html(found) for found in sections.summaries]
    elif metric_line:
        lines.append(metric_line)
    pairwise, jury = agg.pairwise, agg.jury
    if pairwise:  # a pairwise judge: both orders were asked for every sample
        lines.append(" &nbsp; ".join(f"{key.replace('_', ' ')} <b>{'—' if v is None else f'{v:.1%}'}</b>"
                                     for key, v in pairwise.items()))
    if jury:
        lines.append(f"jurors' Fleiss κ <b>{_fmt(jury.get('fleiss_kappa'))}</b> &nbsp; Krippendorff α "
                     f"<b>{_fmt(jury.get('krippendorff_alpha'))}</b> &nbsp; ties {int(jury.get('ties') or 0)}")
    if extra:
        lines.append(f"<span style='color:#8a8f98'>{' · '.join(extra)}</span>")
    figures = figures_html(summary.figures)
    if figures:
        lines.append(figures)
    return "<br>".join(lines)


def grader_html(found: GraderSummary) -> str:
    """One grader of a suite run (an engine/summary.py ``GraderSummary``): mean, interval, pass rate, n."""
    interval = found.interval_text()
    return (f"{html.escape(short(found.label, 60))}: mean <b>{_fmt(found.mean, '.4f')}</b>"
            + (f" <span style='color:#8a8f98'>{interval}</span>" if interval else "")
            + f" &nbsp; pass rate {_rate_html(found.pass_rate, found.pass_rate_ci)}"
            + f" <span style='color:#8a8f98'>(≥ {found.threshold:g})</span>"
            + f" &nbsp; n {found.n:,}")


def _rate_html(rate: float | None, ci: tuple[float, float] | None) -> str:
    """A pass rate in bold and its 95% interval in grey, as the mean's (engine/summary ``rate_text``
    and ``rate_interval_text`` word it for the terminal); "—" without a graded result (NA is not 0%)."""
    if rate is None:
        return "<b>—</b>"
    interval = rate_interval_text(ci)
    return f"<b>{rate:.1%}</b>" + (f" <span style='color:#8a8f98'>{interval}</span>" if interval else "")


#: the most lines of figures the band shows at once; more (a suite's line per grader) scroll within it
BAND_LINES = 6


class _Figures(QtWidgets.QScrollArea):
    """The band's text, as tall as it needs up to ``BAND_LINES`` lines, scrolling within itself past
    that. Why: a suite run states a line per grader, and the band grew with them until it took 45% of
    the height at 1280x800 (6-9 result rows in view, where a dozen and more belong beside the detail
    pane)."""

    def __init__(self, label: QtWidgets.QLabel) -> None:
        super().__init__()
        self.setWidget(label)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)  # the band's own background shows through
        label.setAutoFillBackground(False)
        self._label = label
        self._cap: tuple[str, int] | None = None  # (the font, the height of BAND_LINES lines in it)

    def fit(self) -> None:
        """Take the text's height at the width shown, at most ``BAND_LINES`` lines."""
        label = self._label
        wanted = label.heightForWidth(max(1, self.viewport().width()))
        if wanted <= 0:
            wanted = label.sizeHint().height()
        height = min(wanted, self._lines_height(label)) + 2 * self.frameWidth()
        if height != self.height() or self.maximumHeight() != height:
            self.setFixedHeight(height)

    def _lines_height(self, label: QtWidgets.QLabel) -> int:
        """The height ``BAND_LINES`` whole lines take in ``label`` (its rich text's own line height,
        which is not the font's line spacing): the band never ends on half a line."""
        key = label.font().key()
        if self._cap is None or self._cap[0] != key:
            probe = QtWidgets.QLabel()
            probe.setFont(label.font())
            probe.setTextFormat(Qt.TextFormat.RichText)
            probe.setText("<br>".join(["<b>Ag</b> 0"] * BAND_LINES))
            self._cap = (key, probe.sizeHint().height())
        return self._cap[1]

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit()


class SummaryBar(QtWidgets.QFrame):
    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.text = QtWidgets.QLabel()
        self.text.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.figures = _Figures(self.text)
        self.histogram = ScoreHistogram()
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        self.histogram.setMaximumWidth(300)  # the aggregates' text gets the width; the bars need little
        layout.addWidget(self.figures, 1, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.histogram, 0, Qt.AlignmentFlag.AlignTop)
        self._layout = layout
        self.clear()

    def add_action(self, widget: QtWidgets.QWidget) -> None:
        """A button about the run (Save report), top-aligned between the figures and the histogram."""
        self._layout.insertWidget(1, widget, 0, Qt.AlignmentFlag.AlignTop)

    def clear(self, message: str = "Choose a run to see its results.") -> None:
        self.text.setText(f"<span style='color:#8a8f98'>{html.escape(breakable(message))}</span>")
        self.figures.fit()
        self.histogram.set_data([], 0.0, 1.0)

    def set_summary(self, summary: RunSummary) -> None:
        self.text.setText(aggregates_html(summary))
        self.figures.fit()
        self.histogram.set_data(summary.bins, summary.low, summary.high)
