"""The live view: what others (another analyst, the CLI, a run in another process) change in the
library shows in this window within a second or two, without a click (docs/team.md).

A timer asks the core's ``LibraryWatcher`` (SQLite ``data_version`` + list signatures, PostgreSQL
LISTEN/NOTIFY) what changed, on the GUI thread (the question never waits on the database's
writers), and each changed list refreshes the way the window's own edits refresh it: selections
stay, and an open grader or suite keeps its unsaved edits (a save from a stale version is refused
by the library, never written over another's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .qt import QObject, QTimer

if TYPE_CHECKING:
    from studio.core.store.watch import LibraryWatcher

    from .context import AppContext
    from .runs.panel import RunPanel
    from .suites.page import SuitesPage


class LiveWindow(Protocol):
    """What the live view refreshes in the window (a protocol: the window imports this module)."""

    suites_page: SuitesPage
    run_panel: RunPanel

    def say(self, text: str) -> None: ...

#: how often the window looks; well inside the promised 2 s, and a look is a read of one pragma
#: or of the notifications already received
INTERVAL_MS = 500


class LiveView(QObject):
    def __init__(self, ctx: AppContext, window: LiveWindow) -> None:
        super().__init__(window if isinstance(window, QObject) else None)
        self.ctx = ctx
        self.window = window
        self.watcher: LibraryWatcher | None = None
        try:
            from studio.core.store.watch import LibraryWatcher

            self.watcher = LibraryWatcher(ctx.library)
        except Exception as exc:  # noqa: BLE001 (a second connection refused: the window works without)
            window.say(f"Changes by others will show after a refresh: {exc}")
            return
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.look)
        self.timer.start()

    def look(self) -> set[str]:
        """Refresh what changed since the last look; returns the lists refreshed."""
        if self.watcher is None:
            return set()
        try:
            changed = self.watcher.changes()
        except Exception:  # noqa: BLE001 (a server restarting: the next look tries again)
            return set()
        if "graders" in changed:
            self.ctx.graders_changed.emit()
        if "suites" in changed:
            self.window.suites_page.reload(reopen=False)
        if "datasets" in changed:
            self.ctx.datasets_changed.emit()
        if "runs" in changed:
            self.ctx.runs_changed.emit()
        if "endpoints" in changed:
            self.ctx.endpoints_changed.emit()
        if "labels" in changed:
            self.window.run_panel.results.model.forget_rows()
            self.window.run_panel.results.labeler.show_broken()
        review = getattr(self.window, "review_tab", None)
        if "queues" in changed and review is not None and review.built:
            review.page.refresh_progress()  # other reviewers' progress on the Review page
        return changed

    def stop(self) -> None:
        if self.watcher is not None:
            if hasattr(self, "timer"):
                self.timer.stop()
            self.watcher.close()
            self.watcher = None
