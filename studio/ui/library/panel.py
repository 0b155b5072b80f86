"""The library sidebar: search, the grader tree (by kind, then Trash) and the grader actions."""

from __future__ import annotations

from collections.abc import Callable

from studio.core.graders.registry import kind_labels
from studio.core.models.broken import BrokenRow
from studio.core.store.graders import GraderRecord

from ..broken_rows import BrokenRowsList
from ..context import AppContext
from ..qt import Qt, QtCore, QtGui, QtWidgets, Signal, tool_button
from .actions import GraderActions
from .model import RECORD_ROLE, LibraryFilter, LibraryModel


class LibraryPanel(QtWidgets.QWidget):
    """Emits ``open_requested(key)`` when the user picks a live grader; the window decides."""

    open_requested = Signal(str)
    #: graders to make a suite of (the Suites tab opens a new suite with them)
    suite_requested = Signal(list)

    def __init__(self, ctx: AppContext, actions: GraderActions, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.grader_actions = actions
        self.model = LibraryModel(self)
        self.proxy = LibraryFilter(self)
        self.proxy.setSourceModel(self.model)

        self.search = QtWidgets.QLineEdit(placeholderText="Search graders (key, name, tag)")
        self.search.setClearButtonEnabled(True)
        self.tree = QtWidgets.QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setIconSize(QtCore.QSize(16, 16))
        # names that differ only at the end ("Short answer (units) 1" … "5") stay told apart: a name
        # too long for the sidebar loses its middle, not its end; its tooltip has it whole (issue 43)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        # Ctrl/Shift-click selects several graders (for a suite); the current one is the one opened
        self.tree.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.empty = QtWidgets.QLabel("No graders yet.\nClick “New” to create one,\nor run `grader-studio demo`.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setObjectName("hint")

        self.new_button = tool_button("New")
        self.new_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.new_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.new_button.setToolTip("New grader (Ctrl+N)")
        menu = QtWidgets.QMenu(self.new_button)
        for kind, label in kind_labels().items():
            menu.addAction(label, self._new_of(kind))
        self.new_button.setMenu(menu)
        self.new_button.clicked.connect(lambda: self.grader_actions.new())
        self.duplicate_button = tool_button("Duplicate")
        self.lock_button = tool_button("Lock")
        self.delete_button = tool_button("Delete")
        self.versions_button = tool_button("Versions")
        self.restore_button = tool_button("Restore")
        self.restore_button.setToolTip("Bring the grader back from the Trash")

        # two rows: one row of six buttons made the sidebar's minimum 325 px, and with the runs list
        # and a results grid beside it the window outgrew a 1280 px screen (issue 35)
        buttons = QtWidgets.QGridLayout()
        buttons.setSpacing(2)
        for n, button in enumerate((self.new_button, self.duplicate_button, self.lock_button, self.delete_button,
                                    self.versions_button, self.restore_button)):
            button.setAutoRaise(True)
            buttons.addWidget(button, n // 3, n % 3)
        buttons.setColumnStretch(3, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 0, 6)
        title = QtWidgets.QLabel("Library")
        title.setObjectName("sectionTitle")
        layout.addWidget(title)
        layout.addWidget(self.search)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty, 1)
        # graders whose stored row does not validate (a teammate's write): listed apart, plain text,
        # each named with its author and what is wrong; Delete moves the selected one to the Trash
        self.broken_rows = BrokenRowsList("Broken (cannot be read):", "Delete broken grader", self.grader_actions.delete)
        self.broken, self.broken_delete = self.broken_rows.list, self.broken_rows.button
        layout.addWidget(self.broken_rows)

        self.search.textChanged.connect(self._filter)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.duplicate_button.clicked.connect(lambda: self._with_key(self.grader_actions.duplicate))
        self.delete_button.clicked.connect(lambda: self._with_key(self.grader_actions.delete))
        self.lock_button.clicked.connect(self._toggle_lock)
        self.versions_button.clicked.connect(lambda: self._with_key(self.grader_actions.show_versions))
        self.restore_button.clicked.connect(lambda: self._with_key(self.grader_actions.restore))
        QtGui.QShortcut(QtGui.QKeySequence(QtGui.QKeySequence.StandardKey.Delete), self.tree,
                        lambda: self._with_key(self.grader_actions.delete), context=Qt.ShortcutContext.WidgetShortcut)
        ctx.graders_changed.connect(self.reload)
        self._suppress = False
        self.reload()

    # -- state ------------------------------------------------------------------------------------
    def reload(self) -> None:
        selected = self.current_record()
        key, in_trash = (selected.key, selected.deleted) if selected else (None, False)
        entries = self.ctx.library.graders.listing()
        live = [e for e in entries if isinstance(e, GraderRecord)]
        self.broken_rows.show_rows([e for e in entries if isinstance(e, BrokenRow)])
        deleted = self.ctx.library.graders.list(deleted_only=True)
        self._suppress = True
        try:
            self.model.reload(live, deleted)
            self.tree.expandAll()
            if key is not None:
                self.select(key, in_trash=in_trash, emit=False)
        finally:
            self._suppress = False
        empty = not live and not deleted
        self.tree.setVisible(not empty)
        self.empty.setVisible(empty)
        self._update_buttons()

    def selected_keys(self) -> list[str]:
        """The live graders selected (Ctrl/Shift-click), in the library's order."""
        rows = sorted(self.tree.selectionModel().selectedRows(), key=lambda i: (i.parent().row(), i.row()))
        records = [i.data(RECORD_ROLE) for i in rows]
        return [r.key for r in records if r is not None and not r.deleted]

    def current_record(self) -> GraderRecord | None:
        index = self.tree.currentIndex()
        return index.data(RECORD_ROLE) if index.isValid() else None

    def select(self, key: str, in_trash: bool = False, emit: bool = True) -> bool:
        source = self.model.index_of(key, in_trash)
        if not source.isValid() and not in_trash:
            source = self.model.index_of(key, True)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():
            return False
        suppress = self._suppress
        self._suppress = not emit
        try:
            self.tree.setCurrentIndex(index)
            self.tree.scrollTo(index)
        finally:
            self._suppress = suppress
        self._update_buttons()
        return True

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        self.tree.expandAll()

    def _current_changed(self, current: QtCore.QModelIndex, _previous: QtCore.QModelIndex) -> None:
        self._update_buttons()
        record = current.data(RECORD_ROLE) if current.isValid() else None
        if record is not None and not self._suppress:  # a trashed grader opens read-only, with Restore
            self.open_requested.emit(record.key)

    def _update_buttons(self) -> None:
        record = self.current_record()
        live = record is not None and not record.deleted
        locked = record is not None and record.locked
        self.duplicate_button.setEnabled(live)
        self.delete_button.setEnabled(live and not locked)  # a locked grader cannot be deleted
        self.lock_button.setEnabled(live)
        self.versions_button.setEnabled(record is not None)
        self.restore_button.setVisible(record is not None and record.deleted)
        self.lock_button.setText("Unlock" if live and locked else "Lock")
        self.delete_button.setToolTip("Locked graders cannot be deleted: unlock first" if live and locked
                                      else "Move to the Trash (Del)")

    def _new_of(self, kind: str) -> Callable[[], object]:
        """The New menu's item for one kind (a slot taking no argument: Qt passes none to it)."""
        return lambda: self.grader_actions.new(kind)

    def _with_key(self, fn: Callable[[str], object]) -> None:
        record = self.current_record()
        if record is not None:
            fn(record.key)

    def _toggle_lock(self) -> None:
        record = self.current_record()
        if record is not None:
            self.grader_actions.set_locked(record.key, not record.locked)

    def _context_menu(self, pos: QtCore.QPoint) -> None:
        record = self.current_record()
        menu = QtWidgets.QMenu(self)
        if record is None:
            menu.addAction("New grader…", lambda: self.grader_actions.new())
        elif record.deleted:
            menu.addAction("Restore", lambda: self.grader_actions.restore(record.key))
            menu.addAction("Versions…", lambda: self.grader_actions.show_versions(record.key))
        else:
            menu.addAction("Duplicate…", lambda: self.grader_actions.duplicate(record.key))
            menu.addAction("Unlock" if record.locked else "Lock",
                           lambda: self.grader_actions.set_locked(record.key, not record.locked))
            menu.addAction("Versions…", lambda: self.grader_actions.show_versions(record.key))
            keys = self.selected_keys() or [record.key]
            menu.addAction(f"New suite from {'these ' + str(len(keys)) + ' graders' if len(keys) > 1 else 'this grader'}…",
                           lambda: self.suite_requested.emit(keys))
            menu.addSeparator()
            menu.addAction("Move to Trash", lambda: self.grader_actions.delete(record.key))
        menu.popup(self.tree.viewport().mapToGlobal(pos))
