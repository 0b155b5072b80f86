"""``RunPanel``: choose grader, dataset and endpoint, start or cancel a run, watch results stream in.

The run row is recorded here (the run request's ``start``: one insert) so the grid can follow it at once; the grading
itself happens in a child process driven by the ``RunWorker``, so the engine never competes with the
GUI thread for the GIL. Progress events arrive by signal; the panel keeps only the latest and applies
it on a 100 ms timer (at most ten UI refreshes a second whatever the engine's pace), so a fast grader
cannot flood the GUI thread. The grid re-reads its ids on each tick off the GUI thread.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from studio.core.engine.executors import RAY_HINT, ray_available
from studio.core.engine.progress import Progress
from studio.core.engine.request import RunRequest
from studio.core.engine.runner import RunOptions
from studio.core.engine.summary import stored_summary
from studio.core.graders.registry import kind_labels
from studio.core.models import RunInfo

from ..context import AppContext
from ..eliding import ElidedCombo
from ..messages import Messages, describe_error
from ..plain import breakable
from ..qt import Qt, QtCore, QtGui, QTimer, QtWidgets, Signal, tool_button
from ..results.status import status_hex
from ..results.view import ResultsView

if TYPE_CHECKING:
    from studio.core.store.endpoint_trust import Pending
from ..samples import preferred_dataset
from ..suites.picker import add_suites, fill_versions, grader_row, one_off_keys
from .history import RunsModel, resumable
from .worker import RunWorker

REFRESH_MS = 100
OPTIONS_KEY = "runs/options_shown"
HISTORY_KEY = "runs/history_shown"
#: a run page at least this wide shows the runs list beside the results unless the analyst hid it
WIDE_PAGE = 1300
#: the results pane before any run exists ("Choose a run" would point at an empty list)
NO_RUNS = "No runs yet: choose a grader and a dataset above and press Start run."
#: the progress bar while the grid has not caught up with the engine (issue 35: 100% beside "querying…")
LOADING_FORMAT = "loading results…"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def progress_text(progress: Progress) -> str:
    failed = progress.counts.get("error", 0) + progress.counts.get("invalid", 0)
    parts = [f"{progress.done:,} / {progress.total:,}", f"{progress.rate:,.1f}/s" if progress.rate < 10
             else f"{progress.rate:,.0f}/s", f"ETA {_duration(progress.eta)}"]
    if progress.in_flight is not None and not progress.finished:
        parts.append(f"{progress.in_flight:,} calls in flight")
    if failed:
        parts.append(f"<span style='color:{status_hex('error')}'>{failed:,} failed</span>")
    return " · ".join(parts)




class RunPanel(QtWidgets.QWidget):
    run_started = Signal(int)
    run_finished = Signal(object)  # RunInfo, or None when the run failed
    several_button: QtWidgets.QToolButton  # beside the grader picker, set by suites/picker.py grader_row

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None,
                 messages: Messages | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.worker: RunWorker | None = None
        self.active_run: int | None = None
        #: degraded sandbox isolation, said by the run's child: kept under every message of that run
        self.isolation_warning: str | None = None
        self._pending: Progress | None = None
        #: asked before a run of grader ``key`` starts (the window: save unsaved edits, or use the saved one)
        self.confirm_grader: Callable[[str], bool] = lambda key: True
        #: asked where the run would send the user's key to an endpoint they have not approved
        #: (the window: the approval dialog, dialogs/endpoint_trust.py); no answer is no
        self.approve_endpoint: Callable[[Pending], bool] = lambda held: False

        # a long name elides in the middle, whole in the tooltip and the popup: the run row fits 1280
        # px beside the sidebar (issue 35)
        self.grader = ElidedCombo(14)
        self.version = ElidedCombo(8)
        self.dataset = ElidedCombo(10)
        self.endpoint = ElidedCombo(12)
        self.concurrency = QtWidgets.QSpinBox()
        self.concurrency.setRange(0, 1024)
        self.concurrency.setSpecialValueText("auto")
        self.concurrency.setToolTip("Parallel judge calls / sandbox workers (auto: the endpoint's limit)")
        self.limit = QtWidgets.QSpinBox()
        self.limit.setRange(0, 100_000_000)
        self.limit.setSpecialValueText("all")
        self.limit.setToolTip("Grade only the first N samples")
        self.where = QtWidgets.QComboBox()  # where the samples are graded (engine/executors)
        self.where.addItem("This machine", "local")
        self.where.addItem("Ray cluster at …", "ray")
        self.ray_address = QtWidgets.QLineEdit(os.environ.get("RAY_ADDRESS", ""))
        self.ray_address.setPlaceholderText("RAY_ADDRESS, else a local Ray")
        self.ray_address.setToolTip("The Ray cluster's address (ray://host:10001 or host:6379); empty: "
                                    "$RAY_ADDRESS, else a local Ray instance started for the run. "
                                    "Judges stay on this machine.")
        self.ray_address.setEnabled(False)
        if not ray_available():
            ray_item = self.where.model()
            if isinstance(ray_item, QtGui.QStandardItemModel) and ray_item.item(1) is not None:
                ray_item.item(1).setEnabled(False)
            self.where.setItemData(1, RAY_HINT, Qt.ItemDataRole.ToolTipRole)
        self.where.currentIndexChanged.connect(self._on_where_changed)
        self.start_button = QtWidgets.QPushButton("Start run")
        self.start_button.setDefault(True)
        self.start_button.setShortcut("F5")
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress_bar = QtWidgets.QProgressBar()
        self.progress_bar.setTextVisible(True)
        self.progress_label = QtWidgets.QLabel()
        self.progress_label.setMinimumWidth(260)
        self.message = QtWidgets.QLabel()
        self.message.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.runs = RunsModel(ctx, self)
        self.runs_view = QtWidgets.QTableView()
        self.runs_view.setModel(self.runs)
        self.runs_view.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs_view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.runs_view.verticalHeader().setVisible(False)
        self.runs_view.horizontalHeader().setStretchLastSection(True)
        self.runs_view.setWordWrap(False)
        self.runs_view.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.resume_button = QtWidgets.QPushButton("Resume")
        self.resume_button.setToolTip("Grade the samples an interrupted or cancelled run has not graded yet")
        self.resume_button.setEnabled(False)
        self.retry_button = QtWidgets.QPushButton("Retry errors")
        self.retry_button.setToolTip("Grade the selected run's errored samples again (a key or a server fixed "
                                     "since), replacing their errors; then finish what it has not graded")
        self.retry_button.setEnabled(False)
        self.results = ResultsView(ctx, messages=messages)  # asks before a label replaces another's

        self._build_layout()
        self.results.model.loaded.connect(self._sync_bar)
        self.results.model.busy.connect(self._sync_bar)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._apply_progress)
        self.grader.currentIndexChanged.connect(self._reload_versions)
        self.grader.currentIndexChanged.connect(self._prefer_dataset)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.resume_button.clicked.connect(self._resume_selected)
        self.retry_button.clicked.connect(self._retry_selected)
        self.runs_view.selectionModel().currentRowChanged.connect(self._on_run_selected)
        self.runs.loaded.connect(self._on_runs_loaded)
        ctx.graders_changed.connect(self.reload_choices)
        ctx.datasets_changed.connect(self.reload_choices)
        ctx.endpoints_changed.connect(self.reload_choices)
        ctx.runs_changed.connect(self.runs.reload)
        ctx.grader_selected.connect(self._follow_editor)
        app = QtCore.QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        self.reload_choices()
        self.runs.reload()

    def _build_layout(self) -> None:
        """One row of what a run needs (grader, dataset, start); the rest under Options, shown until a
        run exists; the runs list collapses beside the results, which get the height (issue 24)."""
        self.where.currentIndexChanged.connect(lambda _i: self.where.setToolTip(self.where.currentText()))
        top = QtWidgets.QHBoxLayout()
        top.setSpacing(6)
        # the grader picker carries its "Several…" button (a one-off suite: ui/suites/picker.py)
        for label, buddy, widget, stretch in (("&Grader", self.grader, grader_row(self), 3),
                                              ("&Dataset", self.dataset, self.dataset, 2)):
            caption = QtWidgets.QLabel(label)
            caption.setBuddy(buddy)
            top.addWidget(caption)
            top.addWidget(widget, stretch)
        self.options_button = tool_button("Options")
        self.options_button.setCheckable(True)
        self.options_button.setToolTip("Version, endpoint, concurrency, sample limit and where to grade")
        self.options_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.options_button.setArrowType(Qt.ArrowType.RightArrow)
        self.history_button = tool_button("Runs")
        self.history_button.setCheckable(True)
        self.history_button.setToolTip("Show or hide the list of runs")
        self.history_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.history_button.setArrowType(Qt.ArrowType.LeftArrow)
        for widget in (self.start_button, self.cancel_button, self.options_button, self.history_button):
            top.addWidget(widget)

        self.options = QtWidgets.QWidget()
        form = QtWidgets.QGridLayout(self.options)
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(6)
        form.setVerticalSpacing(4)
        cells = ((0, 0, "&Version", self.version), (0, 2, "&Endpoint", self.endpoint),
                 (0, 4, "C&oncurrency", self.concurrency), (1, 0, "&Limit", self.limit),
                 (1, 2, "W&here", self.where))
        for row, col, label, widget in cells:
            caption = QtWidgets.QLabel(label)
            caption.setBuddy(widget)
            form.addWidget(caption, row, col)
            form.addWidget(widget, row, col + 1)
        form.addWidget(self.ray_address, 1, 4, 1, 2)
        form.setColumnStretch(1, 2)
        form.setColumnStretch(3, 3)
        form.setColumnStretch(5, 1)
        self.options_button.toggled.connect(self._show_options)

        self.progress_bar.setMaximumWidth(260)
        self.progress_label.setMinimumWidth(0)
        progress = QtWidgets.QHBoxLayout()
        progress.setSpacing(8)
        progress.addWidget(self.progress_bar, 1)
        progress.addWidget(self.progress_label)
        progress.addWidget(self.message, 3)

        self.history = QtWidgets.QWidget()
        side = QtWidgets.QVBoxLayout(self.history)
        side.setContentsMargins(0, 0, 0, 0)
        title = QtWidgets.QLabel("<b>Runs</b>")
        title.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        side.addWidget(title)
        side.addWidget(self.runs_view, 1)
        side.addWidget(self.resume_button)
        side.addWidget(self.retry_button)
        self.history.setMinimumWidth(160)
        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.history)
        self.splitter.addWidget(self.results)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setCollapsible(0, True)
        self.splitter.setCollapsible(1, False)
        self.history.hide()
        self.splitter.splitterMoved.connect(lambda *_: self._history_moved())
        self.history_button.toggled.connect(self._show_history)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 4)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.options)
        layout.addLayout(progress)
        layout.addWidget(self.splitter, 1)
        self._idle_progress()
        shown = self.ctx.settings.value(OPTIONS_KEY)
        self._options_chosen = shown is not None
        self._set_options(str(shown).lower() == "true" if shown is not None else True)
        shown = self.ctx.settings.value(HISTORY_KEY)
        #: None until the analyst shows or hides the runs list: then it is shown only on a wide page
        self._history_choice: bool | None = None if shown is None else str(shown).lower() == "true"
        if self._history_choice:
            self.history_button.setChecked(True)

    def _set_options(self, shown: bool) -> None:
        blocked = self.options_button.blockSignals(True)
        self.options_button.setChecked(shown)
        self.options_button.blockSignals(blocked)
        self.options.setVisible(shown)
        self.options_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    def _show_options(self, shown: bool) -> None:
        self._options_chosen = True
        self.ctx.settings.setValue(OPTIONS_KEY, shown)
        self._set_options(shown)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._history_choice is None:  # the list beside the grid only where both have room
            wide = self.width() >= WIDE_PAGE
            if wide != self.history_button.isChecked():
                blocked = self.history_button.blockSignals(True)
                self.history_button.setChecked(wide)
                self.history_button.blockSignals(blocked)
                self._apply_history(wide)

    def _show_history(self, shown: bool) -> None:
        self._history_choice = shown
        self.ctx.settings.setValue(HISTORY_KEY, shown)
        self._apply_history(shown)

    def _apply_history(self, shown: bool) -> None:
        sizes = self.splitter.sizes()
        total = sum(sizes)
        # hidden, not just squeezed to nothing: a collapsed list must not count in the page's minimum width
        if shown and (sizes[0] == 0 or self.history.isHidden()):
            self.history.show()
            width = min(self._history_width(), max(total // 3, 160))
            self.splitter.setSizes([width, max(total - width, 200)])
        elif not shown:
            self.history.hide()
        self.history_button.setArrowType(Qt.ArrowType.LeftArrow if shown else Qt.ArrowType.RightArrow)

    def _history_width(self) -> int:
        """Wide enough for every column's widest cell, so the list cuts no grader's name."""
        self.runs_view.resizeColumnsToContents()
        header = self.runs_view.horizontalHeader()
        return header.length() + self.runs_view.frameWidth() * 2 + self.runs_view.verticalScrollBar().sizeHint().width()

    def _history_moved(self) -> None:
        shown = self.splitter.sizes()[0] > 0 and self.history.isVisibleTo(self)
        if shown != self.history_button.isChecked():
            self.history_button.setChecked(shown)

    # -- choices ------------------------------------------------------------------------------------------
    def reload_choices(self) -> None:
        """Refill the grader, dataset and endpoint pickers, keeping what was chosen."""
        library = self.ctx.library
        keep_grader, keep_dataset, keep_endpoint = (self.grader.currentData(), self.dataset.currentData(),
                                                    self.endpoint.currentData())
        self.grader.blockSignals(True)
        self.grader.clear()
        # by the name the library shows, not by kind: the picker is searched by eye
        for record in sorted(library.graders.list(), key=lambda r: ((r.name or r.key).casefold(), r.key)):
            kind = kind_labels().get(record.kind, record.kind)
            name = record.name if record.name and record.name != record.key else record.key
            label = name if kind.casefold() in name.casefold() else f"{name}  ({kind})"
            self.grader.addItem(label, record.key)
            self.grader.setItemData(self.grader.count() - 1, record.key, Qt.ItemDataRole.ToolTipRole)
        add_suites(self.grader, library)  # suites run from the same picker (ui/suites/picker.py)
        self._select(self.grader, keep_grader)
        self.grader.blockSignals(False)
        self.dataset.clear()
        for ds in library.datasets.list():
            self.dataset.addItem(f"{ds.name}  ({ds.sample_count:,})", ds.name)
        self._select(self.dataset, keep_dataset)
        self.endpoint.clear()
        self.endpoint.addItem("(the grader’s own)", None)
        for name in self.ctx.endpoint_names():
            self.endpoint.addItem(name, name)
        self._select(self.endpoint, keep_endpoint)
        self._reload_versions()
        self._update_buttons()

    @staticmethod
    def _select(combo: QtWidgets.QComboBox, data: object) -> None:
        index = combo.findData(data) if data is not None else -1
        if index >= 0:
            combo.setCurrentIndex(index)

    def _follow_editor(self, key: str) -> None:
        """The grader open in the editor is the one a run most likely wants (not while a run goes)."""
        if not self.is_running():
            self.select(grader=key)

    def _prefer_dataset(self, *_: object) -> None:
        """Choose a dataset the grader (a suite's graders) can read: a QA judge's is qa, not json-outputs."""
        key = self.grader.currentData()
        if not key:
            return
        library = self.ctx.library
        keys = one_off_keys(key) or self._suite_members(key) or [key]
        tags: list[str] = []
        kinds: set[str] = set()
        for member in keys:
            try:
                record = library.graders.get(member)
            except Exception:
                continue
            tags += [t for t in record.definition.tags if t not in tags]
            kinds.add(record.kind)
        names = [str(self.dataset.itemData(i)) for i in range(self.dataset.count())]
        choice = preferred_dataset(tags, kinds.pop() if len(kinds) == 1 else "", names)
        if choice is not None:
            self._select(self.dataset, choice)

    def _reload_versions(self) -> None:
        self.version.clear()
        key = self.grader.currentData()
        if not key or fill_versions(self.version, self.ctx.library, key):
            return
        try:
            record = self.ctx.library.graders.get(key)
            versions = self.ctx.library.graders.versions(key)
        except Exception as exc:
            self._say(describe_error(exc), error=True)
            return
        for v in sorted(versions, key=lambda v: -v.version):
            current = " (current)" if v.version == record.current_version else ""
            self.version.addItem(f"v{v.version}{current}", v.version)
        self._select(self.version, record.current_version)

    def select(self, grader: str | None = None, dataset: str | None = None, endpoint: str | None = None,
               version: int | None = None) -> None:
        """Preselect pickers (the library sidebar's "Run…", tests)."""
        if grader is not None:
            self._select(self.grader, grader)
            if dataset is None:  # the grader chosen again: its dataset too, though the index did not move
                self._prefer_dataset()
        if version is not None:
            self._select(self.version, version)
        if dataset is not None:
            self._select(self.dataset, dataset)
        if endpoint is not None:
            self._select(self.endpoint, endpoint)

    # -- running ------------------------------------------------------------------------------------------
    def is_running(self) -> bool:
        return self.worker is not None

    def start(self) -> int | None:
        """Record a run of the chosen grader on the chosen dataset and start grading; returns its id."""
        if self.is_running():
            return None
        key, dataset = self.grader.currentData(), self.dataset.currentData()
        if not key or not dataset:
            self._say("Choose a grader and a dataset first.", error=True)
            return None
        several = one_off_keys(key)
        # every grader the run grades with: one, a one-off suite's, or a saved suite's (issue 35: an
        # edited judge in "Several…" ran its saved version without a word)
        for member in several if several is not None else self._suite_members(key) or [key]:
            if not self.confirm_grader(member):
                return None
        try:  # the same run request the CLI's ``run`` builds, checked and recorded by the engine
            info = self.run_request().start(self.ctx.library)
        except Exception as exc:
            from ..dialogs.endpoint_trust import approved_now

            if approved_now(self.approve_endpoint, exc):
                return self.start()  # approved: ask again (the next endpoint, or the run)
            self._say(describe_error(exc), error=True)
            return None
        self._launch(info.id, info.total)
        return info.id

    def _suite_members(self, key: str) -> list[str]:
        """The graders of saved suite ``key`` (none when ``key`` names a grader)."""
        try:
            if not self.ctx.library.suites.exists(key):
                return []
            return list(self.ctx.library.suites.get(key).definition.grader_keys())
        except Exception:  # the run's own start says what is wrong with the suite
            return []

    def run_request(self) -> RunRequest:
        """The run the pickers describe, as ``grader-studio run`` asks for it (engine/request.py):
        a grader or a suite, or "Several graders…" as a one-off suite with the mean as its overall."""
        key, dataset = self.grader.currentData(), self.dataset.currentData()
        several = one_off_keys(key)
        ray = self.where.currentData() == "ray"
        return RunRequest.asked(grader=None if several is not None else key, graders=several,
                                 overall="mean" if several is not None else None, dataset=dataset,
                                 version=self.version.currentData(), limit=self.limit.value() or None,
                                 concurrency=self.concurrency.value() or None, endpoint=self.endpoint.currentData(),
                                 executor="ray" if ray else "local",
                                 ray_address=(self.ray_address.text().strip() or None) if ray else None)

    def run_options(self) -> RunOptions:
        """The engine's options of the run the pickers describe (a Ray run's child process reads
        them back from the run)."""
        return self.run_request().options()

    def _on_where_changed(self, _index: int) -> None:
        self._update_buttons()

    def resume(self, run_id: int, retry_errors: bool = False) -> bool:
        """Grade what an interrupted, cancelled or stopped run has not graded yet; ``retry_errors``:
        its errored samples too (``run --resume --retry-errors``), a completed run's included."""
        if self.is_running():
            return False
        try:
            info = self.ctx.library.runs.get(run_id)
        except Exception as exc:
            self._say(describe_error(exc), error=True)
            return False
        if retry_errors and not info.counts.get("error"):
            self._say(f"Run {run_id} has no errored samples to retry.", error=True)
            return False
        if not retry_errors and not resumable(info):
            self._say(f"Run {run_id} is already complete.", error=True)
            return False
        errors = info.counts.get("error", 0) if retry_errors else 0
        self._launch(run_id, info.total, done=info.done - errors, retry_errors=retry_errors)
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Cancelling…")
            self._say(f"Cancelling run {self.active_run}: finishing the samples in flight…")

    def shutdown(self, msecs: int = 10_000) -> None:
        """Cancel a running run and wait for its process (window closing, application quitting).

        A child that has not stopped within ``msecs`` is killed: its run keeps what was stored and
        stays resumable.
        """
        worker = self.worker
        if worker is not None:
            worker.cancel()
            if not worker.wait(msecs):
                worker.kill()

    def _launch(self, run_id: int, total: int, done: int = 0, retry_errors: bool = False) -> None:
        allow = str(self.ctx.settings.value("sandbox/allow_unsandboxed", "false")).lower() == "true"
        worker = RunWorker(self.ctx.library, run_id, self, db_path=self.ctx.db_path, allow_unsandboxed=allow,
                           retry_errors=retry_errors)
        worker.warning.connect(self._on_warning)
        worker.progress.connect(self._on_progress)
        worker.completed.connect(self._on_completed)
        worker.failed.connect(self._on_failed)
        self.worker = worker
        self.active_run = run_id
        self._pending = None
        self.isolation_warning = None
        self.progress_bar.setRange(0, max(total, 1))
        self._bar_run: int | None = run_id
        self._bar_done = done
        self._sync_bar()
        self.progress_label.setText(f"{done:,} / {total:,} · starting…")
        self._say(f"Run {run_id} started.")
        self._update_buttons()
        self.results.set_run(run_id, live=True)
        self._timer.start()
        self.ctx.runs_changed.emit()
        self.run_started.emit(run_id)
        worker.start()  # last: a child that cannot start reports failed() at once

    def _on_progress(self, progress: Progress) -> None:
        if progress.run_id == self.active_run:
            self._pending = progress  # applied by the timer: at most ten refreshes a second

    def _apply_progress(self) -> None:
        progress, self._pending = self._pending, None
        if progress is None:
            return
        self.progress_bar.setRange(0, max(progress.total, 1))
        self._bar_done = progress.done
        self._sync_bar()
        self.progress_label.setText(progress_text(progress))
        self.runs.update_run(progress.run_id, done=progress.done, counts=dict(progress.counts))
        self.results.refresh()

    def _finish(self) -> None:
        self._apply_progress()
        self._timer.stop()
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.wait(5000)
            worker.deleteLater()
        run_id, self.active_run = self.active_run, None
        self.cancel_button.setText("Cancel")
        self._update_buttons()
        if run_id is not None and self.results.run_id == run_id:
            self.results.live = False
            self.results.refresh(force_summary=True)
        self.ctx.runs_changed.emit()

    def _on_completed(self, info: RunInfo) -> None:
        elapsed = self.worker.last_progress.elapsed if self.worker and self.worker.last_progress else None
        self._finish()
        figures = stored_summary(info)
        mean = figures.mean
        text = f"Run {info.id} {info.status}: {info.done:,} of {info.total:,} samples"
        if elapsed is not None:
            text += f" in {elapsed:.1f} s"
        if mean is not None:
            text += f" · mean {mean:.3f}"
        failed = info.counts.get("error", 0) + info.counts.get("invalid", 0)
        if failed:
            text += f" · {failed:,} failed"
        stopped = figures.stopped
        if stopped:  # why (a key refused, a budget reached): what to fix before resuming
            text += f" · {stopped}"
        self._bar_done = info.done
        self._sync_bar()
        self.progress_label.setText(f"{info.done:,} / {info.total:,} · {info.status}")
        self._say(text, error=info.status != "completed")
        self.run_finished.emit(info)

    def _on_warning(self, message: str) -> None:
        """Degraded sandbox isolation: said every time a run starts, and kept in view until the next run
        (a short run's "completed" would otherwise replace it before anyone could read it)."""
        self.isolation_warning = message
        self._say(message, error=True)

    def _on_failed(self, message: str) -> None:
        run_id = self.active_run
        self._finish()
        self.progress_label.setText("failed")
        self._say(f"Run {run_id} failed: {message}", error=True)
        self.run_finished.emit(None)

    # -- past runs -----------------------------------------------------------------------------------------
    def open_run(self, run_id: int) -> None:
        """Show a past run's results (and select it in the list when it is there)."""
        row = self.runs.row_of(run_id)
        if row is not None:
            self.runs_view.selectRow(row)
        self.results.set_run(run_id, live=run_id == self.active_run)
        self._update_buttons()

    def _selected_run(self) -> RunInfo | None:
        index = self.runs_view.currentIndex()
        return self.runs.run_at(index.row()) if index.isValid() else None

    def _on_run_selected(self, current: QtCore.QModelIndex, _previous: QtCore.QModelIndex) -> None:
        info = self.runs.run_at(current.row()) if current.isValid() else None
        if info is not None and info.id != self.results.run_id:
            self.results.set_run(info.id, live=info.id == self.active_run)
        self._update_buttons()

    def _on_runs_loaded(self) -> None:
        if self.results.run_id is None and not self.is_running():
            if self.runs.runs:  # runs exist: the newest is shown, not "Choose a run" beside a folded list
                self.open_run(self.runs.runs[0].id)
            else:
                self.results.show_no_run(NO_RUNS)
        sizes = self.splitter.sizes()
        if self.history.isVisibleTo(self) and sizes[0] and sizes[0] < self._history_width():
            width = min(self._history_width(), max(sum(sizes) // 3, 160))  # the new rows' names, whole
            self.splitter.setSizes([width, sum(sizes) - width])
        if self.runs.runs and not self._options_chosen and self.options_button.isChecked():
            self._set_options(False)  # compact once a run exists, unless the analyst chose otherwise
        shown = self.results.run_id
        row = self.runs.row_of(shown) if shown is not None else None
        if row is not None:
            self.runs_view.selectionModel().blockSignals(True)
            self.runs_view.selectRow(row)
            self.runs_view.selectionModel().blockSignals(False)
        self._update_buttons()

    def _resume_selected(self) -> None:
        info = self._selected_run()
        if info is not None:
            self.resume(info.id)

    def _retry_selected(self) -> None:
        info = self._selected_run()
        if info is not None:
            self.resume(info.id, retry_errors=True)

    # -- state -------------------------------------------------------------------------------------------
    def _update_buttons(self) -> None:
        running = self.is_running()
        self.start_button.setEnabled(not running and self.grader.count() > 0 and self.dataset.count() > 0)
        self.cancel_button.setEnabled(running and not (self.worker and self.worker.cancelling))
        for widget in (self.grader, self.version, self.dataset, self.endpoint, self.concurrency, self.limit,
                       self.where):
            widget.setEnabled(not running)
        self.ray_address.setEnabled(not running and self.where.currentData() == "ray")
        info = self._selected_run()
        self.resume_button.setEnabled(not running and info is not None and resumable(info))
        self.retry_button.setEnabled(not running and info is not None and bool(info.counts.get("error")))
        if not running and self.grader.count() == 0:
            self._say("Create a grader in the library to run it here.")
        elif not running and self.dataset.count() == 0:
            self._say("Import a dataset (Datasets view) to run a grader on it.")

    def _idle_progress(self) -> None:
        self._bar_run = None
        self._bar_done = 0
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_label.setText("No run in progress")

    def _sync_bar(self, *_: object) -> None:
        """The bar says no more than the grid shows: while the grid of the run still loads its rows,
        the bar stops at the rows it has and says so, instead of 100% beside "querying…"."""
        done = self._bar_done
        results = self.results
        model = results.model
        query = model.query
        mine = self._bar_run is not None and results.run_id == self._bar_run
        if mine and query is not None and query.filter.empty and (model.is_loading or model.rowCount() < done):
            self.progress_bar.setValue(min(done, model.rowCount()))
            self.progress_bar.setFormat(LOADING_FORMAT)
            return
        self.progress_bar.setValue(done)
        self.progress_bar.setFormat("%p%")

    def _say(self, text: str, error: bool = False) -> None:
        colour = status_hex("error") if error else "#5b6170"
        # breakable: a failed run's sentence can hold a server's one-line body (it wraps, never widens)
        html_text = f"<span style='color:{colour}'>{html.escape(breakable(text))}</span>"
        if self.isolation_warning and text != self.isolation_warning:
            html_text += (f"<br><span style='color:{status_hex('error')}'>"
                          f"{html.escape(breakable(self.isolation_warning))}</span>")
        self.message.setText(html_text)
