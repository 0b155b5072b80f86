"""The studio window: library sidebar on the left, the open grader / datasets / runs on the right.

Owns the menus and shortcuts, the unsaved-change guard (switching graders, closing), the status bar
(what just happened, the library file, the sandbox's protections) and the remembered geometry.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from studio.core.store.location import display, short_name

from .context import AppContext
from .datasets.view import DatasetsView
from .dialogs.export import ExportDialog
from .dialogs.settings import SettingsDialog
from .editor.page import GraderPage
from .lazy_tab import LazyTab
from .library.actions import GraderActions
from .library.panel import LibraryPanel
from .messages import Messages
from .plain import install_guard
from .qt import Qt, QtCore, QtGui, QTimer, QtWidgets
from .runs.panel import RunPanel
from .suites.page import SuitesPage
from .theme import apply_theme
from .window_size import restore_geometry

if TYPE_CHECKING:
    from studio.core.sandbox.info import SandboxInfo

    from .agreement import AgreementView, CompareView
    from .datasets.generate import GenerateDialog
    from .editor.code_editor import CodeEditor
    from .review import ReviewPage
    from .runs.share_html import ShareHtml

#: a page that opens a sample in Run & results
_SamplePage = TypeVar("_SamplePage", "AgreementView", "CompareView")

TAB_GRADER, TAB_DATASETS, TAB_RUN = range(3)


def _placeholder(text: str) -> QtWidgets.QWidget:
    label = QtWidgets.QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setObjectName("emptyState")
    label.setWordWrap(True)
    return label


#: the sandbox probe and warm-up imports wait this long after the window is built (its first paint)
AFTER_FIRST_PAINT_MS = 300


def _warm_imports() -> None:
    """Import the judge renderer (pybars compiles its grammar on import) before the first judge opens."""
    with contextlib.suppress(ImportError):
        import studio.core.judges.render  # noqa: F401


#: the library sidebar's width on a first start (px): at 1280x800 a grader's name of about 30 characters
#: is read whole beside its icon (a longer one loses its middle, not its end); the pages keep 1010 px,
#: which a suite run's grid of ten graders needs (tests/ui/walk_window_states.py: 300 cut its last column)
SIDEBAR_WIDTH = 270
#: the application's display name: run_app sets it as Qt's ``applicationDisplayName``
APP_NAME = "Grader Studio"


def window_title(library: str, grader: str = "", dirty: bool = False) -> str:
    """"● name — library — Grader Studio": the app's name once, last. Qt's window systems append
    ``applicationDisplayName`` to a title that does not already end with it (QPlatformWindow::
    formatWindowTitle), so a title that named the app anywhere else showed it twice."""
    return f"{'● ' if dirty else ''}{grader + ' — ' if grader else ''}{library} — {APP_NAME}"


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, ctx: AppContext, messages: Messages | None = None, *, check_sandbox: bool = True) -> None:
        super().__init__()
        install_guard()  # every label and tooltip in the window shows data as plain text (studio.ui.plain)
        self.ctx = ctx
        self.setWindowTitle(window_title(short_name(ctx.db_path)))
        self.messages = messages or Messages(self)
        if self.messages.parent is None:
            self.messages.parent = self
        self.theme = str(ctx.settings.value("ui/theme", "light"))
        self.grader_actions = GraderActions(ctx, self.messages, self)
        self.library = LibraryPanel(ctx, self.grader_actions)
        self.page = GraderPage(ctx, self.grader_actions, self.theme)
        self.empty = _placeholder("Pick a grader in the library on the left,\nor create one with New (Ctrl+N).")
        self.grader_stack = QtWidgets.QStackedWidget()
        self.grader_stack.addWidget(self.empty)
        self.grader_stack.addWidget(self.page)
        self.datasets_view = DatasetsView(ctx)
        self.run_panel = RunPanel(ctx, messages=self.messages)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.grader_stack, "Grader")
        # no sideways-scrolling pages: each lays itself out to fit 1280x800 (tests/ui/test_fits_the_screen.py)
        self.tabs.addTab(self.datasets_view, "Datasets")
        self.tabs.addTab(self.run_panel, "Run && results")
        # built when first opened: their plots and statistics are not needed for the first paint
        self.agreement_tab = LazyTab(lambda: self._with_samples(_agreement_page(ctx, self.messages)))
        self.compare_tab = LazyTab(lambda: self._with_samples(_compare_page(ctx)))
        self.tabs.addTab(self.agreement_tab, "Agreement")
        self.tabs.addTab(self.compare_tab, "Compare")
        self.review_tab = LazyTab(lambda: _review_page(ctx, self.messages))  # review queues (ui/review)
        self.tabs.addTab(self.review_tab, "Review")
        self.suites_page = SuitesPage(ctx)  # suites: several graders in one run (ui/suites)
        self.tabs.addTab(self.suites_page, "Suites")
        self.suites_page.suites_changed.connect(self.run_panel.reload_choices)
        self.suites_page.run_requested.connect(self._run_suite)
        self.library.suite_requested.connect(self._new_suite)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.library)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)  # the sidebar keeps its width whatever the page shows
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([SIDEBAR_WIDTH, 1280 - SIDEBAR_WIDTH])
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)
        # the sidebar keeps the width the user gave it: a page with other minimum sizes (the editor
        # empty, a locked banner, a wide designer) must not push it around
        self._sidebar_width = max(SIDEBAR_WIDTH, self.library.minimumSizeHint().width())
        self.splitter.splitterMoved.connect(lambda pos, _index: setattr(self, "_sidebar_width", pos))
        self.library.installEventFilter(self)

        self.library_label = QtWidgets.QLabel(display(ctx.db_path))
        self.sandbox_label = QtWidgets.QLabel("Sandbox: checking…")
        self.statusBar().addPermanentWidget(self.sandbox_label)
        self.statusBar().addPermanentWidget(self.library_label)
        self._build_menus()

        self.library.open_requested.connect(self.open_grader)
        self.grader_actions.open_requested.connect(self._open_from_action)
        self.grader_actions.status.connect(self.say)
        self.grader_actions.compare_requested.connect(self.compare_with_previous)
        self.page.status.connect(self.say)
        self.page.export_requested.connect(self.export)
        self.page.dirty_changed.connect(self._dirty_changed)
        self.grader_actions.may_leave = lambda key: key != self.page.key or self.guard()
        self.run_panel.confirm_grader = self._use_saved_or_save
        self.run_panel.approve_endpoint = self.messages.approve_endpoint
        self.datasets_view.approve_endpoint = self.messages.approve_endpoint
        self.page.report_card.approve_endpoint = self.messages.approve_endpoint
        self.owns_context = False  # a window opened by "Open library…" closes its own library
        ctx.graders_changed.connect(self._library_changed)
        ctx.endpoints_changed.connect(self._endpoints_changed)
        self._restore_state()
        from .live import LiveView

        self.live = LiveView(ctx, self)  # others' graders, suites, runs and labels appear by themselves
        if check_sandbox:
            # after the first paint: the probe and the warm-up import on a thread that would
            # otherwise share the interpreter with building and showing this window
            QTimer.singleShot(AFTER_FIRST_PAINT_MS, self._after_first_paint)
        self.say("Ready.")

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802
        if watched is self.library and event.type() == QtCore.QEvent.Type.Resize \
                and self.library.width() != self._sidebar_width:
            QtCore.QTimer.singleShot(0, self._keep_sidebar)
        return super().eventFilter(watched, event)

    def _keep_sidebar(self) -> None:
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if len(sizes) == 2 and sizes[0] != self._sidebar_width and total > self._sidebar_width:
            self.splitter.setSizes([self._sidebar_width, total - self._sidebar_width])

    # -- menus and shortcuts ------------------------------------------------------------------------------
    def _action(self, menu: QtWidgets.QMenu, text: str, slot: Callable[[], object],
                shortcut: str | QtGui.QKeySequence | QtGui.QKeySequence.StandardKey | None = None,
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
        self._action(file, "&New grader…", lambda: self.guard() and self.grader_actions.new(), "Ctrl+N")
        self._action(file, "&Import grader from a platform file…", self.import_grader, "Ctrl+I",
                     "Adaptive, MKA1, Letta, HUD, OpenAI, promptfoo or Inspect grader files")
        self._action(file, "&Open library…", self.choose_library, "Ctrl+O", "Open or create another library file")
        self._action(file, "Open &shared library…", self.choose_shared_library, None,
                     "A team's library on PostgreSQL: postgresql://USER@HOST:PORT/DATABASE (docs/team.md)")
        self.save_action = self._action(file, "&Save (new version)", self.page.save, "Ctrl+S")
        export = file.addMenu("&Export")
        self._action(export, "&Grader…", self.export, "Ctrl+E", "The grader as a platform's file")
        self._action(export, "Share run as &HTML…", self.share_html, None,
                     "The run shown as one self-contained page anyone can open offline (docs/viewer.md)")
        file.addSeparator()
        self._action(file, "Se&ttings…", self.settings, "Ctrl+,")
        file.addSeparator()
        self._action(file, "&Quit", self.close, "Ctrl+Q")
        edit = bar.addMenu("&Edit")
        keys = QtGui.QKeySequence.StandardKey
        self.edit_actions = {}
        for name, text, key in (("undo", "&Undo", keys.Undo), ("redo", "&Redo", keys.Redo), (None, "", None),
                                ("cut", "Cu&t", keys.Cut), ("copy", "&Copy", keys.Copy),
                                ("paste", "&Paste", keys.Paste), ("selectAll", "Select &all", keys.SelectAll)):
            if name is None:
                edit.addSeparator()
                continue
            self.edit_actions[name] = self._action(edit, text, functools.partial(self.edit_focused, name), key)
        edit.addSeparator()
        self._action(edit, "&Find…", self.find_text, "Ctrl+F")
        self._action(edit, "&Go to line…", self.go_to_line, "Ctrl+G")
        grader = bar.addMenu("&Grader")
        self.validate_action = self._action(grader, "&Validate", self.page.validate, "Ctrl+Return")
        self._action(grader, "&Try on sample", self.page.try_sample, "Ctrl+T")
        self._action(grader, "&Run…", self.run_current, "F5")
        grader.addSeparator()
        self._action(grader, "Lock / Unlock", self._on_key(lambda _key: self.page._toggle_lock()))
        self._action(grader, "Versions…", self._on_key(lambda key: self.grader_actions.show_versions(key, self.theme == "dark")))
        self._action(grader, "Duplicate…", self._on_key(self.grader_actions.duplicate))
        self._action(grader, "Move to Trash", self._on_key(self.grader_actions.delete))
        datasets = bar.addMenu("Data&sets")
        self._action(datasets, "&Import…", self._import_dataset)
        self._action(datasets, "&Generate outputs…", self.generate_outputs, tip=(
            "Call the model under test on a dataset's inputs and store its answers as a new dataset"))
        view = bar.addMenu("&View")
        self._action(view, "&Grader", lambda: self.tabs.setCurrentIndex(TAB_GRADER), "Ctrl+1")
        self._action(view, "&Datasets", lambda: self.tabs.setCurrentIndex(TAB_DATASETS), "Ctrl+2")
        self._action(view, "&Run && results", lambda: self.tabs.setCurrentIndex(TAB_RUN), "Ctrl+3")
        view.addSeparator()
        self._action(view, "Search the library", lambda: self.library.search.setFocus(), "Ctrl+K")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard shortcuts", self.show_shortcuts, "F1")
        self._action(help_menu, "&Documentation (README)", self.open_documentation)
        help_menu.addSeparator()
        self._action(help_menu, "Sandbox protections", self.show_sandbox)
        self._action(help_menu, "About Grader Studio", lambda: self.messages.info(
            "Grader Studio", "Author, try and ship the graders that score LLM outputs."))

    def generate_outputs(self) -> GenerateDialog:
        self.tabs.setCurrentIndex(TAB_DATASETS)
        dialog = self.datasets_view.open_generate()
        dialog.show()
        return dialog

    def edit_focused(self, name: str) -> bool:
        """Undo, Redo, Cut, Copy, Paste or Select all on the focused text field or editor."""
        widget = QtWidgets.QApplication.focusWidget()
        if isinstance(widget, QtWidgets.QAbstractSpinBox):
            widget = widget.findChild(QtWidgets.QLineEdit)
        elif isinstance(widget, QtWidgets.QComboBox) and widget.isEditable():
            widget = widget.lineEdit()
        method = getattr(widget, name, None)
        if widget is None or not callable(method):
            self.say("Click into a text field or editor first.")
            return False
        method()
        return True

    def _on_key(self, act: Callable[[str], object]) -> Callable[[], None]:
        """A menu item's slot acting on the grader open in the editor (none open: nothing)."""
        def slot() -> None:
            if self.page.key:
                act(self.page.key)
        return slot

    def _import_dataset(self) -> None:
        self.tabs.setCurrentIndex(TAB_DATASETS)
        self.datasets_view.choose_import()

    def shortcut_lines(self) -> list[str]:
        lines = []
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            for action in menu.actions() if isinstance(menu, QtWidgets.QMenu) else []:
                keys = action.shortcut().toString(QtGui.QKeySequence.SequenceFormat.NativeText)
                if keys:
                    lines.append(f"{keys:<16} {action.text().replace('&&', '§').replace('&', '').replace('§', '&')}")
        return lines

    def show_shortcuts(self) -> None:
        self.messages.info("Keyboard shortcuts", "\n".join(self.shortcut_lines()))

    @staticmethod
    def documentation_path() -> Path:
        """The README next to the package (a source checkout or an editable install)."""
        import studio

        return Path(studio.__file__).resolve().parents[1] / "README.md"

    def open_documentation(self) -> None:
        path = self.documentation_path()
        if not path.is_file() or not QtGui.QDesktopServices.openUrl(QtCore.QUrl.fromLocalFile(str(path))):
            self.messages.info("Documentation", f"The documentation is the README: {path}\n"
                               "(`grader-studio --help` lists every command).")

    # -- status -------------------------------------------------------------------------------------------
    # -- agreement and compare ------------------------------------------------------------------------
    @property
    def agreement_view(self) -> AgreementView:
        from .agreement import AgreementView

        page = self.agreement_tab.page
        assert isinstance(page, AgreementView)  # what _agreement_page builds
        return page

    @property
    def compare_view(self) -> CompareView:
        from .agreement import CompareView

        page = self.compare_tab.page
        assert isinstance(page, CompareView)  # what _compare_page builds
        return page

    def _with_samples(self, view: _SamplePage) -> _SamplePage:
        view.open_sample.connect(self.show_sample)
        return view

    def _tab_changed(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if widget is self.agreement_tab and self.agreement_view.report is None:
            self.agreement_view.reload()
        elif widget is self.compare_tab and self.compare_view.run_a.count() == 0:
            self.compare_view.reload()
        elif widget is self.review_tab and not self.review_tab.built:
            _ = self.review_tab.page  # built (and its queues loaded) when first shown

    def compare_with_previous(self, key: str) -> None:
        self.tabs.setCurrentWidget(self.compare_tab)
        self.compare_view.compare_latest(key)

    def show_sample(self, run_id: int, sample_id: str) -> None:
        """Open a run's results on one sample: its thread, rationale and label controls together."""
        self.tabs.setCurrentIndex(TAB_RUN)
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
        self.setWindowTitle(window_title(short_name(self.ctx.db_path), name, dirty))

    def _after_first_paint(self) -> None:
        self._check_sandbox()
        self.ctx.tasks.run(_warm_imports)

    def _check_sandbox(self) -> None:
        def probe() -> SandboxInfo:
            from studio.core.sandbox.info import sandbox_info

            return sandbox_info()

        self.ctx.tasks.run(probe, self._sandbox_known, self._sandbox_unknown)

    def _sandbox_known(self, info: SandboxInfo) -> None:
        self.sandbox_info: SandboxInfo | None = info
        active = [p.name for p in info.protections if p.active]
        isolated = [n for n in ("network", "filesystem", "environment") if n in active]
        summary = f"Sandbox: {info.mode}" + (f" · {', '.join(isolated)} isolated" if isolated else " · limits only")
        self.sandbox_label.setText(("⚠ " if info.warnings else "") + summary)
        lines = [f"{'✓' if p.active else '✗'} {p.name}: {p.detail}" for p in info.protections]
        lines += [f"⚠ {w}" for w in info.warnings]
        lines.append(f"namespaces fallback: {info.namespaces_fallback}")
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
            record = self.ctx.library.graders.get(key, include_deleted=True)  # the Trash opens read-only
        except Exception as exc:
            self.messages.error("Cannot open the grader", exc)
            return False
        self.page.open(record)
        self.grader_stack.setCurrentWidget(self.page)
        self.tabs.setCurrentIndex(TAB_GRADER)
        self.library.select(key, in_trash=record.deleted, emit=False)
        if not record.deleted:
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
        self.page.reload_record()  # a grader moved to the Trash stays open, read-only, with Restore
        if self.page.record is not None and self.page.record.deleted:
            self.page.discard()
            self._dirty_changed(False)

    def _endpoints_changed(self) -> None:
        if self.page.record is not None and not self.page.is_dirty():
            self.page.open(self.page.record)

    # -- commands -----------------------------------------------------------------------------------------
    def _new_suite(self, keys: list[str]) -> None:
        self.suites_page.new_from(keys)
        self.tabs.setCurrentWidget(self.suites_page)
        self.suites_page.key.setFocus()

    def _run_suite(self, key: str) -> None:
        self.run_panel.select(grader=key)
        self.tabs.setCurrentIndex(TAB_RUN)

    def _use_saved_or_save(self, key: str, action: str = "the run") -> bool:
        """Before a run or export of ``key``: unsaved edits are saved first, or the saved version is
        used on purpose; False when the user cancels. Runs and exports always use a saved version."""
        if key != self.page.key or not self.page.is_dirty():
            return True
        answer = self.messages.ask_use_edits(self.page.record.definition.display_name, action)  # type: ignore[union-attr]
        if answer == "save":
            return self.page.save()
        return answer == "saved"

    def export(self) -> None:
        if self.page.record is None:
            self.say("Open a grader to export it.")
            return
        if self.page.record.deleted:
            self.say("Restore the grader from the Trash to export it.")
            return
        if not self._use_saved_or_save(self.page.record.key, "the export"):
            return
        definition = self.page.record.definition  # what is saved: the same version a run would use
        self.export_dialog = ExportDialog(self.ctx, definition, self.messages, self, self.theme)
        self.export_dialog.open()

    def share_html(self) -> ShareHtml | None:
        """File ▸ Export ▸ Share run as HTML: the run shown in Run & results, written by a child process."""
        run_id = self.run_panel.results.run_id
        if run_id is None:
            self.say("Open a run in Run & results to share it.")
            return None
        if self.ctx.db_path is None:
            self.say("An in-memory library cannot be exported by another process.")
            return None
        from .file_dialogs import save_file
        from .runs.share_html import ShareHtml

        path = save_file(self, "Share run as HTML", f"run-{run_id}.html", "HTML files (*.html)")
        if not path:
            return None
        self.sharing = ShareHtml(self.ctx.db_path, run_id, path, self)
        self.sharing.done.connect(lambda where: self.say(f"Wrote run {run_id} to {where}: open it in any browser."))
        self.sharing.failed.connect(lambda why: self.messages.error("Share run as HTML", why))
        self.sharing.start()
        self.say(f"Writing run {run_id} as HTML…")
        return self.sharing

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
        had_edits = self.page.is_dirty()
        for editor in self.findChildren(CodeEditor):
            editor.set_theme(self.theme)  # re-highlighting reports a text change: it is not an edit
        if not had_edits:
            self.page.discard()

    def _editor(self) -> CodeEditor | None:
        return self.page.body.code_editor() if self.page.body is not None and self.page.record else None

    def find_text(self) -> None:
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
        if key and self.page.record is not None and not self.page.record.deleted:
            if self.page.is_dirty():
                self.say("Runs use a saved version: Start asks whether to save your edits first.")
            self.run_panel.select(grader=key)

    def import_grader(self) -> list[str]:
        if not self.guard():
            return []
        path = self.messages.choose_file(
            "Import a grader from a platform file",
            "Grader files (*.json *.yaml *.yml *.py *.jsonl);;All files (*)")
        return self.grader_actions.import_file(path) if path else []

    def choose_library(self) -> MainWindow | None:
        path = self.messages.choose_new_file("Open or create a library", "Grader Studio library (*.sqlite *.db);;All files (*)")
        return self.open_library(Path(path)) if path else None

    def choose_shared_library(self) -> MainWindow | None:
        """A team's library on a PostgreSQL server, by URL (a password comes from ~/.pgpass or
        PGPASSWORD; one typed into the URL is used for this session and never stored)."""
        url = self.messages.ask_text("Open a shared library", "PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE):",
                                     "postgresql://")
        if not url or url.strip() in ("", "postgresql://"):
            return None
        from studio.core.store.location import is_server_url

        url = url.strip()
        if not is_server_url(url):
            self.messages.error("Cannot open the library", "a shared library's URL starts with postgresql://")
            return None
        return self.open_library(url)

    def open_library(self, path: Path | str) -> MainWindow | None:
        """Switch to another library file (created when new): a new window on it replaces this one."""
        if self.run_panel.is_running():
            self.messages.error("Cannot switch libraries", "A run is in progress: cancel it or let it finish first.")
            return None
        if not self.guard():
            return None
        from studio.core.store import Library

        from .messages import Messages

        try:
            library = Library.open(path)
        except Exception as exc:
            self.messages.error("Cannot open the library", exc)
            return None
        ctx = AppContext(library, path, self.ctx.settings)
        messages = Messages() if type(self.messages) is Messages else self.messages
        window = MainWindow(ctx, messages, check_sandbox=hasattr(self, "sandbox_info"))
        window.owns_context = True
        self.ctx.settings.setValue("window/last_grader", "")
        self.successor = window
        window.show()
        self.close()
        return window

    # -- state --------------------------------------------------------------------------------------------
    def _restore_state(self) -> None:
        settings = self.ctx.settings
        restore_geometry(self, settings.value("window/geometry"))
        splitter = settings.value("window/splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)
            self._sidebar_width = self.splitter.sizes()[0] or self._sidebar_width
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
        if "studio.ui.runs.share_html" in sys.modules:  # a half-written page is never left behind
            from .runs.share_html import ShareHtml

            for sharing in self.findChildren(ShareHtml):  # File ▸ Export's and the Compare tab's
                if sharing.is_running():
                    sharing.cancel()
                    sharing.process.waitForFinished(5000)
        self.save_state()
        event.accept()
        self.live.stop()
        if self.owns_context:
            self.ctx.close()


def _agreement_page(ctx: AppContext, messages: Messages) -> AgreementView:
    """The agreement page, its module (pyqtgraph, numpy) imported on first use."""
    from .agreement import AgreementView

    return AgreementView(ctx, messages=messages)


def _compare_page(ctx: AppContext) -> CompareView:
    """The compare page, its module imported on first use."""
    from .agreement import CompareView

    return CompareView(ctx)


def _review_page(ctx: AppContext, messages: Messages) -> ReviewPage:
    """The Review page (review queues), its module imported on first use."""
    from .review import ReviewPage

    return ReviewPage(ctx, messages=messages)
