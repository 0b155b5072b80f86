"""The judge's templates: Handlebars editors with a palette of the variables the judge can read."""

from __future__ import annotations

from studio.core.judges.variables import VARIABLE_DOCS

from ..editor.code_editor import CodeEditor
from ..editor.find_bar import FindBar
from ..qt import Qt, QtWidgets, Signal

#: the palette's sample variables: derived from the judges' own list, never kept by hand here
SAMPLE_VARIABLES = list(VARIABLE_DOCS.items())

_LISTS = {"turns", "context_turns", "documents"}


def snippet(name: str, dialect: str) -> str:
    if dialect == "format":
        return "{" + name + "}"
    if name in _LISTS:
        inner = "{{{this}}}" if name == "documents" else "{{role}}: {{{content}}}"
        return "{{#each " + name + "}}\n" + inner + "\n{{/each}}"
    return "{{{" + name + "}}}"


class TemplateEditor(QtWidgets.QWidget):
    """Tabs of template editors; an empty template means the judge's built-in one."""

    changed = Signal()

    def __init__(self, theme: str = "light", parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self.editors: dict[str, CodeEditor] = {}
        self.builtins: dict[str, str] = {}
        self.template_list = QtWidgets.QListWidget()
        self.template_list.setToolTip("Double-click to insert at the cursor")
        self.template_list.setMaximumWidth(230)
        self.use_builtin = QtWidgets.QPushButton("Start from built-in")
        self.use_builtin.setToolTip("Copy the judge's built-in template here to edit it")
        self.hint = QtWidgets.QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        side = QtWidgets.QVBoxLayout()
        title = QtWidgets.QLabel("Variables")
        title.setObjectName("sectionTitle")
        side.addWidget(title)
        side.addWidget(self.template_list, 1)
        side.addWidget(self.use_builtin)
        top = QtWidgets.QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        left = QtWidgets.QVBoxLayout()
        self.find_bar = FindBar(QtWidgets.QPlainTextEdit())
        left.addWidget(self.tabs, 1)
        left.addWidget(self.find_bar)
        left.addWidget(self.hint)
        top.addLayout(left, 1)
        top.addLayout(side)
        self.setLayout(top)
        self.dialect = "handlebars"
        self.template_list.itemActivated.connect(self._insert)
        self.use_builtin.clicked.connect(self._copy_builtin)
        self.tabs.currentChanged.connect(lambda _i: self._update_hint())

    def configure(self, tabs: list[tuple[str, str, str]], variables: list[tuple[str, str]], dialect: str) -> None:
        """``tabs``: (field, title, built-in text or '') ; ``dialect`` handlebars or format."""
        self.tabs.clear()
        self.editors.clear()
        self.builtins.clear()
        self.dialect = dialect
        for field, title, builtin in tabs:
            editor = CodeEditor("handlebars" if dialect == "handlebars" else None, self.theme)
            editor.setLineWrapMode(CodeEditor.LineWrapMode.WidgetWidth)
            if builtin:
                editor.setPlaceholderText("Empty: the judge's built-in template is used.\n\n" + builtin)
            editor.textChanged.connect(self.changed.emit)
            self.editors[field] = editor
            self.builtins[field] = builtin
            self.tabs.addTab(editor, title)
        self.template_list.clear()
        for name, help_text in variables:
            item = QtWidgets.QListWidgetItem(name)
            item.setToolTip(f"{snippet(name, dialect)}\n{help_text}")
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.template_list.addItem(item)
        self._update_hint()

    def _current_field(self) -> str | None:
        widget = self.tabs.currentWidget()
        return next((f for f, e in self.editors.items() if e is widget), None)

    def _update_hint(self) -> None:
        field = self._current_field()
        has_builtin = bool(field and self.builtins.get(field))
        self.use_builtin.setVisible(has_builtin)
        if self.dialect == "format":
            self.hint.setText("Letta placeholders: {input}, {submission}, {ground_truth} and the row's rubric_vars.")
        else:
            self.hint.setText("Handlebars: {{{name}}} inserts text as is, {{#if x}}…{{/if}}, {{#each list}}…{{/each}}."
                              + ("  Empty = built-in template." if has_builtin else ""))

    def _insert(self, item: QtWidgets.QListWidgetItem) -> None:
        field = self._current_field()
        if field is None or self.editors[field].isReadOnly():
            return
        editor = self.editors[field]
        editor.insertPlainText(snippet(item.data(Qt.ItemDataRole.UserRole), self.dialect))
        editor.setFocus()

    def _copy_builtin(self) -> None:
        field = self._current_field()
        if field and self.builtins.get(field) and not self.editors[field].isReadOnly():
            self.editors[field].setPlainText(self.builtins[field])

    def set_text(self, field: str, text: str | None) -> None:
        editor = self.editors[field]
        blocked = editor.blockSignals(True)
        editor.set_text(text or "")
        editor.blockSignals(blocked)

    def text(self, field: str) -> str | None:
        text = self.editors[field].toPlainText()
        return text if text.strip() else None

    def set_read_only(self, read_only: bool) -> None:
        for editor in self.editors.values():
            editor.setReadOnly(read_only)
        self.use_builtin.setEnabled(not read_only)

    def current_editor(self) -> CodeEditor | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, CodeEditor) else None
