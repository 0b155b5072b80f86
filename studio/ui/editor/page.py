"""One open grader: its kind's editor, a locked banner, Save/Validate/Try, and the Checks/Try panel.

The page never writes to the library itself: saving and locking go through ``GraderActions`` so the
sidebar and the menus see the same operation. Validation and Try run in ``ctx.tasks``; a result that
arrives after the user opened another grader is dropped (each request carries a ticket).
"""

from __future__ import annotations

import json

from studio.core.checks import Check, check_definition, quick_checks
from studio.core.graders.registry import kind_labels
from studio.core.models import GraderDefinition, Outcome
from studio.core.models.definition import dump_grader
from studio.core.outside import shown_time
from studio.core.store.graders import GraderRecord
from studio.core.store.versioned import lock_sentence

from ..context import AppContext
from ..eliding import ElidedLabel
from ..icons import icon
from ..library.actions import GraderActions
from ..messages import describe_error
from ..qt import Qt, QtGui, QTimer, QtWidgets, Signal
from .bodies import make_body
from .body import DefinitionBody
from .checks_panel import ChecksPanel
from .try_panel import TryPanel, grade_one

BOTTOM_KEY = "editor/bottom_collapsed"
QWIDGETSIZE_MAX = (1 << 24) - 1
#: how long typing pauses before the quick checks run again (they run nothing: ast, a regex, the model)
RECHECK_MS = 600
LOCKED_TEXT = "This grader is locked: it opens read-only and cannot be saved or deleted."
TRASHED_TEXT = "This grader is in the Trash: it is shown read-only. Restore it to edit, run or export it."


def _same(a: GraderDefinition, b: GraderDefinition) -> bool:
    return json.dumps(dump_grader(a), sort_keys=True) == json.dumps(dump_grader(b), sort_keys=True)


class GraderPage(QtWidgets.QWidget):
    status = Signal(str)
    export_requested = Signal()
    dirty_changed = Signal(bool)

    def __init__(self, ctx: AppContext, actions: GraderActions, theme: str = "light",
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.grader_actions = actions
        self.theme = theme
        self.record: GraderRecord | None = None
        self.body: DefinitionBody | None = None
        self._dirty = False
        self._ticket = 0
        #: edits since the grader opened: checks that ran on an older text are shown out of date
        self._edits = 0
        self._recheck = QTimer(self)
        self._recheck.setSingleShot(True)
        self._recheck.setInterval(RECHECK_MS)
        self._recheck.timeout.connect(self._quick_check)

        self.banner = QtWidgets.QFrame()
        self.banner.setObjectName("lockBanner")
        banner_icon = QtWidgets.QLabel()
        banner_icon.setPixmap(icon("lock").pixmap(16, 16))
        self.banner_icon = banner_icon
        self.banner_text = banner_text = QtWidgets.QLabel(LOCKED_TEXT)
        banner_text.setWordWrap(True)
        self.unlock_button = QtWidgets.QPushButton("Unlock")
        banner = QtWidgets.QHBoxLayout(self.banner)
        banner.setContentsMargins(10, 6, 10, 6)
        banner.addWidget(banner_icon)
        banner.addWidget(banner_text, 1)
        banner.addWidget(self.unlock_button)
        self.banner.hide()

        # a long name elides (its tooltip says it whole); it never widens the window
        self.title = ElidedLabel()
        self.title.setObjectName("pageTitle")
        self.subtitle = ElidedLabel()
        self.subtitle.setObjectName("hint")
        self.subtitle.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.save_button = QtWidgets.QPushButton("Save")
        self.save_button.setToolTip("Save as a new version (Ctrl+S)")
        self.save_button.setObjectName("primary")
        self.validate_button = QtWidgets.QPushButton("Validate")
        self.validate_button.setToolTip("Run the checks (Ctrl+Enter)")
        self.try_button = QtWidgets.QPushButton("Try")
        self.try_button.setToolTip("Grade one sample with the text as it is now")
        self.export_button = QtWidgets.QPushButton("Export…")
        self.versions_button = QtWidgets.QPushButton("Versions…")
        self.lock_button = QtWidgets.QPushButton("Lock")
        # the name on a line of its own: the buttons do not cut it (issue 24)
        header = QtWidgets.QVBoxLayout()
        header.setSpacing(2)
        header.addWidget(self.title)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.subtitle, 1)
        for button in (self.validate_button, self.try_button, self.save_button, self.export_button,
                       self.versions_button, self.lock_button):
            row.addWidget(button)
        header.addLayout(row)

        self.body_holder = QtWidgets.QStackedWidget()
        self.checks = ChecksPanel()
        self.try_panel = TryPanel(ctx)
        self.bottom = QtWidgets.QTabWidget()
        self.bottom.setDocumentMode(True)
        self.bottom.addTab(self.checks, "Checks")
        self.bottom.addTab(self.try_panel, "Try")
        from ..judges.report_card import ReportCard

        self.report_card = ReportCard(ctx)  # a judge's bias probes (grader-studio probe)
        self.bottom.addTab(self.report_card, "Report card")
        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.body_holder)
        self.splitter.addWidget(self.bottom)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setSizes([600, 190])
        self.splitter.setChildrenCollapsible(False)
        # the Checks/Try panel folds down to its tabs, giving the editor the height; a tab click,
        # Validate or Try unfolds it
        self.bottom_toggle = QtWidgets.QToolButton()
        self.bottom_toggle.setAutoRaise(True)
        self.bottom_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.bottom.setCornerWidget(self.bottom_toggle, Qt.Corner.TopRightCorner)
        self.bottom_collapsed = False
        self.bottom_toggle.clicked.connect(lambda: self.set_bottom_collapsed(not self.bottom_collapsed))
        self.bottom.tabBarClicked.connect(lambda _i: self.set_bottom_collapsed(False))
        self._bottom_height = 190
        self.set_bottom_collapsed(str(ctx.settings.value(BOTTOM_KEY, "false")).lower() == "true", remember=False)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.banner)
        layout.addLayout(header)
        layout.addWidget(self.splitter, 1)

        self.save_button.clicked.connect(self.save)
        self.validate_button.clicked.connect(self.validate)
        self.checks.validate_requested.connect(self.validate)
        self.try_button.clicked.connect(self.try_sample)
        self.try_panel.try_requested.connect(self.try_sample)
        self.export_button.clicked.connect(lambda: self.export_requested.emit())
        self.versions_button.clicked.connect(lambda: self.record and self.grader_actions.show_versions(self.record.key, self.theme == "dark"))
        self.lock_button.clicked.connect(self._toggle_lock)
        self.unlock_button.clicked.connect(self._banner_action)
        self.checks.line_activated.connect(self._go_to_line)

    def set_bottom_collapsed(self, collapsed: bool, remember: bool = True) -> None:
        """Fold the Checks/Try panel to its tab bar (True) or unfold it to the height it had."""
        if collapsed == self.bottom_collapsed and remember:
            return
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if collapsed:
            if not self.bottom_collapsed and sizes[1] > 0:
                self._bottom_height = sizes[1]
            folded = self.bottom.tabBar().sizeHint().height() + 2
            self.bottom.setMaximumHeight(folded)
            if total:
                self.splitter.setSizes([total - folded, folded])
        else:
            self.bottom.setMaximumHeight(QWIDGETSIZE_MAX)
            if total:
                height = min(self._bottom_height, max(total // 2, 120))
                self.splitter.setSizes([total - height, height])
        self.bottom_collapsed = collapsed
        self.bottom_toggle.setText("Show" if collapsed else "Hide")
        self.bottom_toggle.setArrowType(Qt.ArrowType.UpArrow if collapsed else Qt.ArrowType.DownArrow)
        self.bottom_toggle.setToolTip("Show the Checks and Try panel" if collapsed
                                      else "Fold the Checks and Try panel away: the editor gets its height")
        if remember:
            self.ctx.settings.setValue(BOTTOM_KEY, collapsed)

    # -- opening ---------------------------------------------------------------------------------------
    @property
    def key(self) -> str | None:
        return self.record.key if self.record else None

    @property
    def read_only(self) -> bool:
        return self.record is None or self.record.locked or self.record.deleted

    def open(self, record: GraderRecord) -> None:
        self._ticket += 1
        if self.body is not None:
            self.body_holder.removeWidget(self.body)
            self.body.deleteLater()
        self.record = record
        #: the version the edits began from: a save is refused when the stored head moved since
        self.base_version = record.current_version
        self.body = make_body(self.ctx, record.kind, self.theme)
        self.body.load(record.definition)
        self.body.changed.connect(self._changed)
        self.body_holder.addWidget(self.body)
        self.body_holder.setCurrentWidget(self.body)
        self.try_panel.picker.prefer(record.definition.tags, record.kind)
        preview = getattr(self.body, "preview", None)
        if preview is not None:
            preview.picker.prefer(record.definition.tags, record.kind)
        self._recheck.stop()
        self.checks.set_error("Not validated yet. Press Validate (Ctrl+Enter).")
        self.try_panel.set_error("Pick a sample and press Try.")
        self.report_card.set_grader(record.key, record.definition)
        self._set_dirty(False)
        self._apply_record()

    def reload_record(self) -> None:
        """The library changed (lock, restore, a save elsewhere): refresh state, keep unsaved edits."""
        if self.record is None:
            return
        try:
            record = self.ctx.library.graders.get(self.record.key, include_deleted=True)
        except Exception:
            return
        changed_version = record.current_version != self.record.current_version
        self.record = record
        if changed_version and not self._dirty and self.body is not None:
            self.body.load(record.definition)
            self.base_version = record.current_version  # nothing unsaved: the page follows the head
        self._apply_record()

    def _apply_record(self) -> None:
        record = self.record
        assert record is not None and self.body is not None
        definition = record.definition
        self.title.setText(definition.display_name + ("  •" if self._dirty else ""))
        state = "in the Trash" if record.deleted else (lock_sentence(record) if record.locked else "")
        self.subtitle.setText("  ·  ".join(p for p in (record.key, kind_labels().get(record.kind, record.kind),
                                                         f"v{record.current_version}", state,
                                                         f"updated {shown_time(record.updated_at, '%Y-%m-%d')}") if p))
        self.title.set_tip(definition.description.strip())
        read_only = self.read_only
        self.banner.setVisible(record.locked or record.deleted)
        self.banner_text.setText(TRASHED_TEXT if record.deleted else LOCKED_TEXT)
        self.banner_icon.setPixmap(icon("trash" if record.deleted else "lock").pixmap(16, 16))
        self.unlock_button.setText("Restore" if record.deleted else "Unlock")
        self.body.set_read_only(read_only)
        self._update_save()
        self.lock_button.setText("Unlock" if record.locked else "Lock")
        for button in (self.lock_button, self.validate_button, self.try_button, self.export_button):
            button.setEnabled(not record.deleted)

    def _update_save(self) -> None:
        """Save is offered (and highlighted) only when there is something to save."""
        self.save_button.setEnabled(not self.read_only and self._dirty)

    def _banner_action(self) -> None:
        if self.record is None:
            return
        if self.record.deleted:
            self.grader_actions.restore(self.record.key)
        else:
            self.grader_actions.set_locked(self.record.key, False)

    # -- dirty state -----------------------------------------------------------------------------------
    def _changed(self) -> None:
        if not self._dirty:
            self._set_dirty(True)
        # the checks shown were for a text no longer there: say so at once, check again after a pause
        self._edits += 1
        self.checks.mark_stale()
        if not self.read_only:
            self._recheck.start()

    def _quick_check(self) -> None:
        """The checks that run nothing, on the text as it is now, off the GUI thread (a sandbox run
        waits for Validate). A result for a text edited since is dropped: the next pause brings its own."""
        if self.body is None:
            return
        try:
            definition = self.body.definition()
        except Exception as exc:
            self.checks.show_checks([Check(name="definition", status="failed", message=describe_error(exc))])
            return
        edits, ticket = self._edits, self._ticket
        # a bound method of the page, not a closure: Qt drops the answer of a page already destroyed
        self.ctx.tasks.run(lambda: (edits, ticket, quick_checks(definition)), self._quick_checked)

    def _quick_checked(self, found: tuple[int, int, list[Check]]) -> None:
        edits, ticket, checks = found
        if edits == self._edits and ticket == self._ticket and self.body is not None:
            self.checks.show_checks(checks)
            self.body.show_checks(checks)

    def hideEvent(self, event: QtGui.QHideEvent) -> None:  # noqa: N802
        """No re-check of a page nobody sees (another tab, a closed window): it waits for the page."""
        self._recheck.stop()
        super().hideEvent(event)

    def showEvent(self, event: QtGui.QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if self.checks.stale and not self.read_only:
            self._recheck.start()

    def _set_dirty(self, dirty: bool) -> None:
        self._dirty = dirty
        if self.record is not None:
            self.title.setText(self.record.definition.display_name + ("  •" if dirty else ""))
        self._update_save()
        self.dirty_changed.emit(dirty)

    def is_dirty(self) -> bool:
        """Edits that differ from the saved version (a change typed and undone is not dirty)."""
        if not self._dirty or self.record is None or self.body is None or self.read_only:
            return False
        try:
            return not _same(self.body.definition(), self.record.definition)
        except Exception:
            return True

    def discard(self) -> None:
        self._set_dirty(False)

    # -- actions ---------------------------------------------------------------------------------------
    def current_definition(self) -> GraderDefinition:
        assert self.body is not None
        return self.body.definition()

    def save(self) -> bool:
        if self.record is None or self.body is None:
            return False
        if self.read_only:
            self.grader_actions.messages.error("Cannot save", f"grader {self.record.key!r} is locked: unlock it to edit")
            return False
        try:
            definition = self.body.definition()
        except Exception as exc:
            self.grader_actions.messages.error("Cannot save", exc)
            return False
        message = self._failing_checks_note(definition)
        if message is None:
            return False  # the user keeps editing: the text stays, unsaved
        record = self.grader_actions.save(definition, message, base_version=self.base_version)
        if record is None:
            return False  # refused (a stale version keeps the edits here, unsaved)
        self.record = record
        self.base_version = record.current_version
        self._set_dirty(False)
        self._apply_record()
        return True

    def _failing_checks_note(self, definition: GraderDefinition) -> str | None:
        """Before edits become a version: the quick checks (Validate's own, without the sandbox). A
        failure is shown and the user asked; saving anyway is allowed (nothing typed is lost) and the
        version's message records it. Returns the version's message, or None to keep editing."""
        checks = quick_checks(definition)
        failed = [c for c in checks if c.status == "failed"]
        if not failed:
            return ""
        self.checks.show_checks(checks)
        self.body.show_checks(checks)  # type: ignore[union-attr]
        self.bottom.setCurrentWidget(self.checks)
        self.set_bottom_collapsed(False)
        where = "; ".join(f"{c.name}{f' (line {c.line})' if c.line else ''}: {c.message}" for c in failed)
        version = (self.record.current_version + 1) if self.record else 1
        if not self.grader_actions.messages.confirm(
                "Save with a failing check?",
                f"{where}.\n\nSave anyway as v{version}? A run of this version will fail until it is fixed. "
                "Cancel keeps your text in the editor, unsaved.", "Save anyway", safe_default=True):
            if failed[0].line:
                self._go_to_line(failed[0].line)
            self.status.emit(f"Not saved: {where}.")
            return None
        return f"saved with a failing check: {where}"

    def validate(self) -> None:
        if self.body is None:
            return
        self.bottom.setCurrentWidget(self.checks)
        self.set_bottom_collapsed(False)
        try:
            definition = self.body.definition()
        except Exception as exc:
            check = Check(name="definition", status="failed", message=describe_error(exc))
            self.checks.show_checks([check])
            self.status.emit("The definition is not valid.")
            return
        self._ticket += 1
        ticket, edits = self._ticket, self._edits
        self._recheck.stop()  # Validate checks this text, sandbox included
        self.checks.set_running()
        self.status.emit("Validating…")

        def done(checks: list[Check]) -> None:
            if ticket != self._ticket or self.body is None:
                return
            self.checks.show_checks(checks)
            if edits != self._edits:  # typed while the sandbox ran: these are for the text before
                self.checks.mark_stale()
                self._recheck.start()  # and the text as it is now gets its quick checks
                return
            self.body.show_checks(checks)
            self.status.emit(self.checks.summary.text())

        def failed(exc: BaseException) -> None:
            if ticket == self._ticket:
                self.checks.set_error(f"Validation could not run: {describe_error(exc)}")
                self.status.emit("Validation could not run.")

        self.ctx.tasks.run(lambda: check_definition(definition), done, failed)

    def try_sample(self) -> None:
        if self.body is None:
            return
        self.bottom.setCurrentWidget(self.try_panel)
        self.set_bottom_collapsed(False)
        sample = self.try_panel.picker.sample()
        if sample is None:
            self.try_panel.set_error("Pick a sample (import a dataset first), or write one by hand.")
            return
        try:
            definition = self.body.definition()
        except Exception as exc:
            self.try_panel.set_error(describe_error(exc))
            return
        self._ticket += 1
        ticket = self._ticket
        self.try_panel.set_running()
        library = self.ctx.library

        def done(outcome: Outcome) -> None:
            if ticket == self._ticket:
                self.try_panel.show_outcome(outcome)
                score = "no score" if outcome.score is None else f"score {outcome.score:.3g}"
                self.status.emit(f"Tried {sample.id}: {outcome.status}, {score}.")

        def failed(exc: BaseException) -> None:
            if ticket == self._ticket:
                self.try_panel.set_error(describe_error(exc))

        self.ctx.tasks.run(lambda: grade_one(library, definition, sample), done, failed)

    def _toggle_lock(self) -> None:
        if self.record is None:
            return
        if not self.record.locked and self.is_dirty():
            answer = self.grader_actions.messages.ask_unsaved(self.record.definition.display_name)
            if answer == "cancel" or (answer == "save" and not self.save()):
                return
            if answer == "discard":
                self.body.load(self.record.definition)  # type: ignore[union-attr]
                self._set_dirty(False)
        self.grader_actions.set_locked(self.record.key, not self.record.locked)

    def _go_to_line(self, line: int) -> None:
        editor = self.body.code_editor() if self.body else None
        if editor is not None:
            editor.go_to_line(line)
