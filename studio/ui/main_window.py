"""The studio window: library sidebar on the left, the open grader / datasets / runs on the right.

Owns the menus and shortcuts, the unsaved-change guard (switching graders, closing), the status bar
(what just happened, the library file, the sandbox's protections) and the remembered geometry.
"""

from __future__ import annotations

import contextlib

from .agreement import AgreementView, CompareView
from .context import AppContext
from .datasets.view import DatasetsView
from .dialogs.export import ExportDialog
from .dialogs.settings import SettingsDialog
from .editor.page import GraderPage
from .library.actions import GraderActions
from .library.panel import LibraryPanel
from .messages import Messages
from .qt import Qt, QtGui, QtWidgets
from .runs.panel import RunPanel
from .theme import apply_theme

TAB_GRADER, TAB_DATASETS, TAB_RUN = range(3)


def _placeholder(text: str) -> QtWidgets.QWidget:
    label = QtWidgets.QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setObjectName("emptyState")
    label.setWordWrap(True)
    return label


def _scrollable(view: QtWidgets.QWidget) -> QtWidgets.QWidget:
    """A wide view scrolls instead of forcing the whole window wider than a laptop screen."""
    scroll = QtWidgets.QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
    scroll.setWidget(view)
    return scroll


def _warm_imports() -> None:
    """Import the judge renderer (pybars compiles its grammar on import) before the first judge opens."""
    with contextlib.suppress(ImportError):
        import studio.core.judges.render  # noqa: F401


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, ctx: AppContext, messages: Messages | None = None, *, check_sandbox: bool = True) -> None:
        super().__init__()
        self.ctx = ctx
        self.setWindowTitle(f"Grader Studio — {ctx.db_path.name}")
        self.messages = messages or Messages(self)
        if self.messages.parent is None:
            self.messages.parent = self
        self.theme = str(ctx.settings.value("ui/theme", "light"))
        self.actions = GraderActions(ctx, self.messages, self)
        self.library = LibraryPanel(ctx, self.actions)
        self.page = GraderPage(ctx, self.actions, self.theme)
        self.empty = _placeholder("Pick a grader in the library on the left,\nor create one with New (Ctrl+N).")
        self.grader_stack = QtWidgets.QStackedWidget()
        self.grader_stack.addWidget(self.empty)
        self.grader_stack.addWidget(self.page)
        self.datasets_view = DatasetsView(ctx)
        self.run_panel = RunPanel(ctx)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.grader_stack, "Grader")
        self.tabs.addTab(_scrollable(self.datasets_view), "Datasets")
        self.tabs.addTab(_scrollable(self.run_panel), "Run && results")
        self.agreement_view = AgreementView(ctx)
        self.compare_view = CompareView(ctx)
        self.tabs.addTab(self.agreement_view, "Agreement")
        self.tabs.addTab(self.compare_view, "Compare")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.agreement_view.open_sample.connect(self.show_sample)
        self.compare_view.open_sample.connect(self.show_sample)
        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.library)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([270, 1130])
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)

        self.library_label = QtWidgets.QLabel(str(ctx.db_path))
        self.sandbox_label = QtWidgets.QLabel("Sandbox: checking…")
        self.statusBar().addPermanentWidget(self.sandbox_label)
        self.statusBar().addPermanentWidget(self.library_label)
        self._build_menus()

        self.library.open_requested.connect(self.open_grader)
        self.actions.open_requested.connect(self._open_from_action)
        self.actions.status.connect(self.say)
        self.actions.compare_requested.connect(self.compare_with_previous)
        self.page.status.connect(self.say)
        self.page.export_requested.connect(self.export)
        self.page.dirty_changed.connect(self._dirty_changed)
        ctx.graders_changed.connect(self._library_changed)
        ctx.endpoints_changed.connect(self._endpoints_changed)
        self._restore_state()
        if check_sandbox:
            self._check_sandbox()
            self.ctx.tasks.run(_warm_imports)
        self.say("Ready.")

    # -- menus and shortcuts ------------------------------------------------------------------------------
    def _action(self, menu: QtWidgets.QMenu, text: str, slot, shortcut: str | QtGui.QKeySequence | None = None,  # type: ignore[no-untyped-def]
                tip: str = "") -> QtGui.QAction:
        action = menu.addAction(text)
        action.triggered.connect(lambda _checked=False: slot())
        if shortcut is not None:
            action.setShortcut(QtGui.QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if tip:
            action.setStatusTip(tip)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&New grader…", lambda: self.guard() and self.actions.new(), "Ctrl+N")
        self.save_action = self._action(file, "&Save (new version)", self.page.save, "Ctrl+S")
        self._action(file, "&Export…", self.export, "Ctrl+E")
        file.addSeparator()
        self._action(file, "Se&ttings…", self.settings, "Ctrl+,")
        file.addSeparator()
        self._action(file, "&Quit", self.close, "Ctrl+Q")
        edit = bar.addMenu("&Edit")
        self._action(edit, "&Find…", self.find, "Ctrl+F")
        self._action(edit, "&Go to line…", self.go_to_line, "Ctrl+G")
        grader = bar.addMenu("&Grader")
        self.validate_action = self._action(grader, "&Validate", self.page.validate, "Ctrl+Return")
        self._action(grader, "&Try on sample", self.page.try_sample, "Ctrl+T")
        self._action(grader, "&Run…", self.run_current, "F5")
        grader.addSeparator()
        self._action(grader, "Lock / Unlock", lambda: self.page.key and self.page._toggle_lock())
        self._action(grader, "Versions…", lambda: self.page.key and self.actions.show_versions(self.page.key, self.theme == "dark"))
        self._action(grader, "Duplicate…", lambda: self.page.key and self.actions.duplicate(self.page.key))
        self._action(grader, "Move to Trash", lambda: self.page.key and self.actions.delete(self.page.key))
        view = bar.addMenu("&View")
        self._action(view, "&Grader", lambda: self.tabs.setCurrentIndex(TAB_GRADER), "Ctrl+1")
        self._action(view, "&Datasets", lambda: self.tabs.setCurrentIndex(TAB_DATASETS), "Ctrl+2")
        self._action(view, "&Run && results", lambda: self.tabs.setCurrentIndex(TAB_RUN), "Ctrl+3")
        view.addSeparator()
        self._action(view, "Search the library", lambda: self.library.search.setFocus(), "Ctrl+K")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "Sandbox protections", self.show_sandbox)
        self._action(help_menu, "About Grader Studio", lambda: self.messages.info(
            "Grader Studio", "Author, try and ship the graders that score LLM outputs."))

    # -- status -------------------------------------------------------------------------------------------
    # -- agreement and compare ------------------------------------------------------------------------
    def _tab_changed(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if widget is self.agreement_view and self.agreement_view.report is None:
            self.agreement_view.reload()
        elif widget is self.compare_view and self.compare_view.run_a.count() == 0:
            self.compare_view.reload()

    def compare_with_previous(self, key: str) -> None:
        self.tabs.setCurrentWidget(self.compare_view)
        self.compare_view.compare_latest(key)

    def show_sample(self, run_id: int, sample_id: str) -> None:
        """Open a run's results on one sample: its thread, rationale and label controls together."""
        self.tabs.setCurrentIndex(2)
        self.run_panel.open_run(run_id)
        results = self.run_panel.results

        def select(_count: int = 0) -> None:
            from .results.columns import COLUMN_INDEX

            model = results.model
            for row in range(model.rowCount()):
                if model.data(model.index(row, COLUMN_INDEX["sample_id"])) == sample_id:
                    results.select_row(row)
                    results.table.setFocus()
                    break

        if results.model.is_loading or results.model.rowCount() == 0:
            results.model.loaded.connect(select, Qt.ConnectionType.SingleShotConnection)
        else:
            select()

    def say(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def _dirty_changed(self, dirty: bool) -> None:
        name = self.page.record.definition.display_name if self.page.record else ""
        self.setWindowTitle(f"{'● ' if dirty else ''}{name + ' — ' if name else ''}Grader Studio — {self.ctx.db_path.name}")

    def _check_sandbox(self) -> None:
        def probe():  # type: ignore[no-untyped-def]
            from studio.core.sandbox.info import sandbox_info

            return sandbox_info()

        self.ctx.tasks.run(probe, self._sandbox_known, self._sandbox_unknown)

    def _sandbox_known(self, info) -> None:  # type: ignore[no-untyped-def]
        self.sandbox_info = info
        active = [p.name for p in info.protections if p.active]
        isolated = [n for n in ("network", "filesystem", "environment") if n in active]
        summary = f"Sandbox: {info.mode}" + (f" · {', '.join(isolated)} isolated" if isolated else " · limits only")
        self.sandbox_label.setText(("⚠ " if info.warnings else "") + summary)
        lines = [f"{'✓' if p.active else '✗'} {p.name}: {p.detail}" for p in info.protections]
        lines += [f"⚠ {w}" for w in info.warnings]
        self.sandbox_label.setToolTip("\n".join(lines))

    def _sandbox_unknown(self, exc: BaseException) -> None:
        self.sandbox_info = None
        self.sandbox_label.setText("Sandbox: unknown")
        self.sandbox_label.setToolTip(str(exc))

    def show_sandbox(self) -> None:
        text = self.sandbox_label.toolTip() or self.sandbox_label.text()
        self.messages.info("Sandbox protections", text)

    # -- opening graders ----------------------------------------------------------------------------------
    def guard(self) -> bool:
        """True when it is fine to leave the open grader (saved, discarded, or nothing to lose)."""
        if not self.page.is_dirty():
            return True
        answer = self.messages.ask_unsaved(self.page.record.definition.display_name)  # type: ignore[union-attr]
        if answer == "save":
            return self.page.save()
        if answer == "discard":
            self.page.discard()
            return True
        return False

    def open_grader(self, key: str) -> bool:
        if self.page.key == key and self.grader_stack.currentWidget() is self.page:
            self.tabs.setCurrentIndex(TAB_GRADER)
            return True
        if not self.guard():
            if self.page.key:
                self.library.select(self.page.key, emit=False)
            return False
        try:
            record = self.ctx.library.graders.get(key)
        except Exception as exc:
            self.messages.error("Cannot open the grader", exc)
            return False
        self.page.open(record)
        self.grader_stack.setCurrentWidget(self.page)
        self.tabs.setCurrentIndex(TAB_GRADER)
        self.library.select(key, emit=False)
        self.ctx.grader_selected.emit(key)
        self.ctx.settings.setValue("window/last_grader", key)
        self._dirty_changed(False)
        return True

    def _open_from_action(self, key: str) -> None:
        if self.page.key == key:
            self.page.reload_record()
            if self.page.record is not None and not self.page.is_dirty():
                self.page.open(self.page.record)
            self.library.select(key, emit=False)
            return
        self.open_grader(key)

    def _library_changed(self) -> None:
        if self.page.key is None:
            return
        self.page.reload_record()
        if self.page.record is not None and self.page.record.deleted:
            self.page.discard()
            self.grader_stack.setCurrentWidget(self.empty)
            self.page.record = None
            self._dirty_changed(False)

    def _endpoints_changed(self) -> None:
        if self.page.record is not None and not self.page.is_dirty():
            self.page.open(self.page.record)

    # -- commands -----------------------------------------------------------------------------------------
    def export(self) -> None:
        if self.page.record is None:
            self.say("Open a grader to export it.")
            return
        try:
            definition = self.page.current_definition()
        except Exception:
            definition = self.page.record.definition
        self.export_dialog = ExportDialog(self.ctx, definition, self.messages, self, self.theme)
        self.export_dialog.open()

    def settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.ctx, self.messages, self)
        dialog.theme_changed.connect(self.set_theme)
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def set_theme(self, theme: str) -> None:
        app = QtWidgets.QApplication.instance()
        if isinstance(app, QtWidgets.QApplication):
            self.theme = apply_theme(app, theme)
        from .editor.code_editor import CodeEditor

        self.page.theme = self.theme
        for editor in self.findChildren(CodeEditor):
            editor.set_theme(self.theme)

    def _editor(self):  # type: ignore[no-untyped-def]
        return self.page.body.code_editor() if self.page.body is not None and self.page.record else None

    def find(self) -> None:
        body = self.page.body
        bar = getattr(body, "find_bar", None) or getattr(getattr(body, "templates", None), "find_bar", None)
        if bar is None or self.tabs.currentIndex() != TAB_GRADER:
            self.say("Find works in the code and template editors.")
            return
        editor = self._editor()
        if editor is not None:
            bar.editor = editor
        bar.open_bar()

    def go_to_line(self) -> None:
        editor = self._editor()
        if editor is None:
            self.say("Go to line works in the code and template editors.")
            return
        line = self.messages.ask_int("Go to line", f"Line (1–{editor.blockCount()}):",
                                     editor.textCursor().blockNumber() + 1, 1, editor.blockCount())
        if line:
            editor.go_to_line(line)

    def run_current(self) -> None:
        self.tabs.setCurrentIndex(TAB_RUN)
        key = self.page.key
        if key:
            if self.page.is_dirty():
                self.say("The run uses the saved version: save (Ctrl+S) to run your edits.")
            self.run_panel.select(grader=key)

    # -- state --------------------------------------------------------------------------------------------
    def _restore_state(self) -> None:
        settings = self.ctx.settings
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1440, 900)
        splitter = settings.value("window/splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)
        page_splitter = settings.value("window/page_splitter")
        if page_splitter is not None:
            self.page.splitter.restoreState(page_splitter)
        last = settings.value("window/last_grader")
        if last:
            try:
                self.ctx.library.graders.get(str(last))
            except Exception:
                return
            self.open_grader(str(last))

    def save_state(self) -> None:
        settings = self.ctx.settings
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/splitter", self.splitter.saveState())
        settings.setValue("window/page_splitter", self.page.splitter.saveState())

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:  # noqa: N802
        if not self.guard():
            event.ignore()
            return
        if self.run_panel.is_running():
            if not self.messages.confirm("A run is in progress",
                                         "Quit and cancel the run? Samples already graded are kept; you can resume it later.",
                                         "Cancel run and quit"):
                event.ignore()
                return
            self.run_panel.shutdown()
        self.save_state()
        event.accept()
