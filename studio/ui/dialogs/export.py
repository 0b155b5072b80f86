"""Export: pick a platform, see the files it would write and, before writing, what travels exactly,
what is approximated and which platforms refuse and why; save or copy.

Exporters are pure (they never execute a grader), but they run in ``ctx.tasks`` anyway so a slow
one never freezes the window.
"""

from __future__ import annotations

from studio.core.models import GraderDefinition
from studio.core.platforms import platforms
from studio.core.platforms._fidelity import Fidelity, fidelity
from studio.core.platforms._fields import export_endpoints
from studio.core.safe_files import write_tree
from studio.core.store.endpoints import EndpointRepository

from ..context import AppContext
from ..editor.code_editor import CodeEditor
from ..messages import Messages, describe_error
from ..qt import Qt, QtGui, QtWidgets


def _language(path: str) -> str | None:
    if path.endswith((".yaml", ".yml")):
        return "yaml"
    if path.endswith(".py"):
        return "python"
    return None


def describe_fidelity(report: Fidelity) -> str:
    """Plain text: what travels exactly, what is approximated (and by how much), what is lost."""
    if report.refused:
        return f"Refused: {report.refused}"
    parts = []
    if report.exact:
        parts.append("Travels exactly:\n" + "\n".join(f"• {p}" for p in report.exact))
    if report.approximated:
        parts.append("Approximated:\n" + "\n".join(f"• {p}" for p in report.approximated))
    if report.not_carried:
        parts.append("Not carried over:\n" + "\n".join(f"• {p}" for p in report.not_carried))
    if report.not_read_back:
        parts.append("Imported back, these fields differ: " + ", ".join(report.not_read_back))
    elif not parts:
        return "Exports without loss: imported back, it is the same grader."
    return "\n".join(parts)


class ExportDialog(QtWidgets.QDialog):
    def __init__(self, ctx: AppContext, definition: GraderDefinition, messages: Messages,
                 parent: QtWidgets.QWidget | None = None, theme: str = "light") -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Export {definition.display_name}")
        self.ctx = ctx
        self.definition = definition
        self.messages = messages
        self.theme = theme
        self.files: dict[str, str] = {}
        self._ticket = 0
        self.platform = QtWidgets.QComboBox()
        self.support = QtWidgets.QLabel()
        self.support.setWordWrap(True)
        self.file_list = QtWidgets.QListWidget()
        self.file_list.setMaximumWidth(260)
        self.preview = QtWidgets.QStackedWidget()
        self.notes = QtWidgets.QLabel()
        self.notes.setWordWrap(True)
        self.notes.setObjectName("hint")
        self.save_button = QtWidgets.QPushButton("Save to folder…")
        self.copy_button = QtWidgets.QPushButton("Copy file")
        self.copy_button.setToolTip("Copy the selected file's text to the clipboard")
        close = QtWidgets.QPushButton("Close")
        top = QtWidgets.QFormLayout()
        top.addRow("Target platform", self.platform)
        top.addRow("", self.support)
        body = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self.file_list)
        body.addWidget(self.preview)
        body.setSizes([220, 680])
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.notes, 1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.save_button)
        buttons.addWidget(close)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(body, 1)
        layout.addLayout(buttons)
        self.file_list.currentRowChanged.connect(self.preview.setCurrentIndex)
        self.platform.currentIndexChanged.connect(self.refresh)
        self.save_button.clicked.connect(self.save)
        self.copy_button.clicked.connect(self.copy)
        close.clicked.connect(self.reject)
        self.resize(960, 620)

        # the platforms that can express the grader first, each marked, so the choice is seen at a glance
        # and the dialog never opens on a platform that would only refuse
        found = platforms()
        with export_endpoints(self._endpoints()):  # a judge names its endpoint's model id
            supports = {name: platform.can_export(definition) for name, platform in found.items()}
        order = sorted(found, key=lambda n: not supports[n].ok)
        self.capable = [n for n in order if supports[n].ok]
        for name in order:
            platform, support = found[name], supports[name]
            mark = "✓" if support.ok else "✗"
            self.platform.addItem(f"{mark} {platform.label}" + ("" if support.ok else "  (cannot express this grader)"),
                                  name)
            self.platform.setItemData(self.platform.count() - 1,
                                      "Exports this grader" if support.ok else support.reason,
                                      Qt.ItemDataRole.ToolTipRole)
        self.platform.setCurrentIndex(0)
        self.summary = QtWidgets.QLabel(
            (f"Can export to: {', '.join(found[n].label for n in self.capable)}." if self.capable
             else "No platform can express this grader.")
            + ("\nCannot: " + "; ".join(f"{found[n].label} ({supports[n].reason})"
                                           for n in order if not supports[n].ok) + "."
               if len(self.capable) < len(order) else ""))
        self.summary.setWordWrap(True)
        self.summary.setObjectName("hint")
        top.insertRow(0, "", self.summary)
        self.refresh()

    def _show_problem(self, text: str) -> None:
        self.support.setText(text)
        self.support.setObjectName("error")
        self.support.style().polish(self.support)
        self._set_files({})

    def _set_files(self, files: dict[str, str]) -> None:
        self.files = files
        self.file_list.clear()
        while self.preview.count():
            widget = self.preview.widget(0)
            self.preview.removeWidget(widget)
            widget.deleteLater()
        for path, text in files.items():
            self.file_list.addItem(path)
            view = CodeEditor(_language(path), self.theme)
            view.set_text(text)
            view.setReadOnly(True)
            self.preview.addWidget(view)
        if files:
            self.file_list.setCurrentRow(0)
        self.save_button.setEnabled(bool(files))
        self.copy_button.setEnabled(bool(files))

    def refresh(self, *_: object) -> None:
        name = self.platform.currentData()
        found = platforms()
        platform = found.get(name)
        if platform is None:
            return
        with export_endpoints(self._endpoints()):
            support = platform.can_export(self.definition)
        if not support.ok:
            self._show_problem(f"{platform.label} cannot express this grader: {support.reason}")
            return
        self._ticket += 1
        ticket = self._ticket
        self.support.setText("Rendering…")
        self.support.setObjectName("hint")
        definition = self.definition
        endpoints = self._endpoints()

        def work():  # type: ignore[no-untyped-def]
            with export_endpoints(endpoints):  # context variables do not cross into the pool's thread
                return platform.export(definition), fidelity(platform, definition)

        def done(answer) -> None:  # type: ignore[no-untyped-def]
            if ticket != self._ticket:
                return
            result, report = answer
            self.support.setObjectName("warning" if result.warnings else "ok")
            self.support.style().polish(self.support)
            self.support.setText(describe_fidelity(report))
            self.notes.setText("\n".join(result.notes))  # one note a line: they are separate sentences
            self._set_files(dict(result.files))

        def failed(exc: BaseException) -> None:
            if ticket == self._ticket:
                self._show_problem(describe_error(exc))

        self.ctx.tasks.run(work, done, failed)

    def _endpoints(self) -> dict[str, object]:
        try:
            return {e.name: e for e in EndpointRepository.of(self.ctx.library).list()}
        except Exception:  # a library without endpoints (or unreadable): judges name no model
            return {}

    def copy(self) -> None:
        row = self.file_list.currentRow()
        if row < 0:
            return
        path = self.file_list.item(row).text()
        QtGui.QGuiApplication.clipboard().setText(self.files[path])
        self.notes.setText(f"Copied {path} to the clipboard.")

    def save(self) -> None:
        folder = self.messages.choose_directory("Export to folder")
        if not folder:
            return
        try:
            written = write_tree(folder, self.files)  # never through a planted link
        except OSError as exc:
            self.messages.error("Cannot export", exc)
            return
        self.notes.setText(f"Wrote {len(written)} file(s) to {folder}.")
