"""The run page's verdict, token usage and cost, and its "Save report" menu (JUnit XML, markdown).

Everything is the engine's (engine/verdict.py, usage.py, reports/): the window computes the same
numbers ``run`` prints, off the GUI thread, and only lays them out.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core import safe_files
from studio.core.engine.summary import RunAggregates

from ..context import AppContext
from ..file_dialogs import save_file
from ..messages import describe_error
from ..qt import QtGui, QtWidgets, Signal

if TYPE_CHECKING:
    from studio.core.engine.sections import RunSections
    from studio.core.engine.usage import Usage
    from studio.core.engine.verdict import Verdict
    from studio.core.models import RunInfo
    from studio.core.store.library import Library


@dataclass
class RunFigures:
    """What the summary band adds under the aggregates: the verdict and the usage."""

    verdict: Verdict | None  # None while the run is pending or running
    usage: Usage | None  # None when the run spent no tokens
    #: the run's sections with their one summary each (engine/sections.py ``RunSections``): every
    #: figure the band states of a finished run is read from it, as ``run`` prints it
    run: RunSections | None = None


def run_figures(library: Library, run_id: int, aggregates: RunAggregates, info: RunInfo | None = None) -> RunFigures:
    """Off the GUI thread, for a finished run only: a live run refreshes twice a second and its
    aggregates already count its tokens, while the usage per endpoint reads every judge row's details
    (about a second for 20,000 judge results). Usage only when the run spent tokens. ``info``: the
    run as the band just read it (its status counts are a pass over the run's status index)."""
    from studio.core.engine.sections import load_run
    from studio.core.engine.usage import run_usage
    from studio.core.engine.verdict import judge

    run = load_run(library, run_id, info=info)
    if run.info.status in ("pending", "running"):  # no verdict yet, and its usage still grows
        return RunFigures(verdict=None, usage=None)
    spent = aggregates.tokens
    usage = run.usage if run.usage is not None else run_usage(library, run)
    return RunFigures(verdict=judge(run), usage=usage if spent or usage.total.tokens else None, run=run)


def figures_html(figures: RunFigures | None) -> str:
    """One or two grey lines: usage and cost (per endpoint when several), and a verdict that failed."""
    if figures is None:
        return ""
    from studio.core.engine.usage import format_usd

    lines = []
    usage = figures.usage
    if usage is not None:
        total = usage.total
        text = (f"{total.calls:,} judge calls · {total.prompt_tokens:,} prompt tokens ({total.cached_tokens:,} cached)"
                f" · {total.completion_tokens:,} completion tokens · cost {format_usd(usage.cost)}")
        lines.append(f"<span style='color:#8a8f98'>{html.escape(text)}</span>")
        # a breakdown only when there is one to make: several endpoints, or a suite's graders
        for label, tallies, costs in (("endpoint", usage.endpoints, usage.endpoint_cost),
                                      ("grader", usage.graders, usage.grader_cost)):
            if len(tallies) > 1:
                parts = [f"{name} {t.tokens:,} tokens {format_usd(costs.get(name))}" for name, t in tallies.items()]
                lines.append(f"<span style='color:#8a8f98'>{html.escape(f'per {label}: ' + ' · '.join(parts))}</span>")
    verdict = figures.verdict
    if verdict is not None and not verdict.passed:
        lines.append(f"<span style='color:#e08a1e'>{html.escape(verdict.sentence)}</span>")
    return "<br>".join(lines)


class ReportButton(QtWidgets.QToolButton):
    """Save the shown run's JUnit XML or markdown summary, as ``runs report`` writes them."""

    saved = Signal(str)
    failed = Signal(str)

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: int | None = None
        self.setText("Save report")
        self.setToolTip("Write this run's JUnit XML (for CI) or its markdown summary (for a pull request)")
        self.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QtWidgets.QMenu(self)
        self.junit_action = QtGui.QAction("JUnit XML…", menu)
        self.markdown_action = QtGui.QAction("Markdown summary…", menu)
        menu.addAction(self.junit_action)
        menu.addAction(self.markdown_action)
        self.setMenu(menu)
        self.junit_action.triggered.connect(lambda: self._choose("junit"))
        self.markdown_action.triggered.connect(lambda: self._choose("markdown"))
        self.setEnabled(False)

    def set_run(self, run_id: int | None) -> None:
        self.run_id = run_id
        self.setEnabled(run_id is not None)

    def _choose(self, kind: str) -> None:
        if self.run_id is None:
            return
        suffix, label = (".xml", "JUnit XML (*.xml)") if kind == "junit" else (".md", "Markdown (*.md)")
        path = save_file(self, "Save report", f"run-{self.run_id}{suffix}", label)
        if path:
            self.save(kind, path)

    def save(self, kind: str, path: str | Path) -> None:
        """Write in the background; ``saved`` (the path) or ``failed`` (one sentence) says how it went."""
        run_id, library = self.run_id, self.ctx.library
        if run_id is None:
            return

        def work() -> str:
            return write_report(library, run_id, kind, Path(path))

        self.ctx.tasks.run(work, self.saved.emit, lambda exc: self.failed.emit(describe_error(exc)))


def write_report(library: Library, run_id: int, kind: str, path: Path) -> str:
    from studio.core.engine.sections import load_run
    from studio.core.engine.verdict import judge

    run = load_run(library, run_id)
    if kind == "junit":
        from studio.core.engine.reports.junit import junit_xml

        text = junit_xml(library, run)
    else:
        from studio.core.engine.reports.markdown import markdown_report
        from studio.core.engine.usage import run_usage

        text = markdown_report(library, run, judge(run), usage=run_usage(library, run))
    safe_files.write_text(path, text)  # never through a link planted at the target
    return str(path)
