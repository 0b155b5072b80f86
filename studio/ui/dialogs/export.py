"""Export: pick a platform, see the files it would write and, before writing, what travels exactly,
what is approximated and which platforms refuse and why; save or copy. As the CLI's ``export``: a
dataset to write with the grader as one eval (``--dataset``) and the model id a judge names
(``--model``); a model id only a server on this machine knows is a warning, not "travels exactly".

Exporters are pure (they never execute a grader), but they run in ``ctx.tasks`` anyway so a slow
one never freezes the window.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse

from studio.core.kinds import get_kind
from studio.core.models import GraderDefinition
from studio.core.platforms import ExportResult, platforms
from studio.core.platforms._eval import TARGETS as EVAL_TARGETS
from studio.core.platforms._eval import export_eval
from studio.core.platforms._fidelity import Fidelity, fidelity
from studio.core.platforms._fields import export_endpoints, export_model
from studio.core.safe_files import write_tree
from studio.core.store.endpoints import EndpointRepository

from ..context import AppContext
from ..editor.code_editor import CodeEditor
from ..eliding import ElidedCombo
from ..messages import Messages, describe_error
from ..qt import Qt, QtGui, QtWidgets


def _language(path: str) -> str | None:
    if path.endswith((".yaml", ".yml")):
        return "yaml"
    if path.endswith(".py"):
        return "python"
    return None


#: the dataset choice that exports the grader alone
NO_DATASET = "(none: the grader alone)"


def _local(url: str) -> bool:
    """A server on this machine or a private network: its model names mean nothing to a platform."""
    host = (urlparse(url).hostname or "").strip("[]")
    if host in ("localhost", "") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def model_warning(definition: GraderDefinition, endpoints: dict[str, object], override: str, label: str) -> str:
    """Why ``label`` would not know the model id a judge exports ("" when it would, or when it is typed)."""
    name = getattr(definition, "endpoint", None)
    if override.strip() or getattr(definition, "model", None) or not name:
        return ""
    config = endpoints.get(name)
    url, model = str(getattr(config, "base_url", "") or ""), str(getattr(config, "model", "") or "")
    note = str(getattr(config, "label", "") or "")
    if not model or not (_local(url) or "not a model" in note):
        return ""
    where = f"{url}, {note}" if note else url
    return (f"⚠ The model id {model!r} comes from the endpoint {name} on this machine ({where}): {label} "
            f"would not know it. Type the model id {label} should call under Model id.")


def describe_fidelity(report: Fidelity, model_problem: str = "") -> str:
    """Plain text: what travels exactly, what is approximated (and by how much), what is lost; a model
    id the platform would not know is said as a warning, first, and not among what travels exactly."""
    if report.refused:
        return f"Refused: {report.refused}"
    parts = [model_problem] if model_problem else []
    exact = [p for p in report.exact if not (model_problem and p.startswith("model id "))]
    if exact:
        parts.append("Travels exactly:\n" + "\n".join(f"• {p}" for p in exact))
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
        self.dataset = ElidedCombo(16)
        self.dataset.set_base_tip("Also write this dataset in the platform's form: one eval that runs as is "
                                  f"(the CLI's --dataset; {', '.join(EVAL_TARGETS)})")
        self.dataset.addItem(NO_DATASET, None)
        for record in ctx.library.datasets.list():
            self.dataset.addItem(f"{record.name}  ({record.sample_count:,})", record.name)
        self.model = QtWidgets.QLineEdit()
        judge_model = self._model_of(definition)
        self.model.setPlaceholderText(f"the judge's: {judge_model}" if judge_model else "the judge's")
        self.model.setToolTip("The model id the exported judge calls on the platform (the CLI's --model)")
        self.model.setEnabled(get_kind(definition.kind).is_judge)  # a function's endpoint is its ctx's, no judge
        choices = QtWidgets.QHBoxLayout()
        choices.addWidget(self.platform, 2)
        choices.addWidget(QtWidgets.QLabel("Dataset"))
        choices.addWidget(self.dataset, 1)
        model_label = QtWidgets.QLabel("Model id")
        choices.addWidget(model_label)
        choices.addWidget(self.model, 1)
        for widget in (model_label, self.model):  # only a judge names a model
            widget.setVisible(self.model.isEnabled())
        top = QtWidgets.QFormLayout()
        top.addRow("Target platform", choices)
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
        self.dataset.currentIndexChanged.connect(self.refresh)
        self.model.editingFinished.connect(self.refresh)
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
            if widget is None:
                break
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
        self.dataset.setEnabled(name in EVAL_TARGETS)
        if not support.ok:
            self._show_problem(f"{platform.label} cannot express this grader: {support.reason}")
            return
        self._ticket += 1
        ticket = self._ticket
        self.support.setText("Rendering…")
        self.support.setObjectName("hint")
        definition = self.definition
        endpoints = self._endpoints()
        model = self.model.text().strip() if self.model.isEnabled() else ""
        dataset = self.dataset.currentData() if name in EVAL_TARGETS else None
        library = self.ctx.library
        problem = model_warning(definition, endpoints, model, platform.label)

        def work() -> tuple[ExportResult, Fidelity]:
            # context variables do not cross into the pool's thread: set here
            with export_endpoints(endpoints), export_model(model or None):
                if dataset:  # the grader and the dataset as one eval, as `export --dataset`
                    result = export_eval(name, [(definition.key, definition)], library.datasets.samples(dataset),
                                         dataset)
                else:
                    result = platform.export(definition)
                return result, fidelity(platform, definition)

        def done(answer: tuple[ExportResult, Fidelity]) -> None:
            if ticket != self._ticket:
                return
            result, report = answer
            self.support.setObjectName("warning" if result.warnings or problem else "ok")
            self.support.style().polish(self.support)
            self.support.setText(describe_fidelity(report, problem))
            self.notes.setText("\n".join(result.notes))  # one note a line: they are separate sentences
            self._set_files(dict(result.files))

        def failed(exc: BaseException) -> None:
            if ticket == self._ticket:
                self._show_problem(describe_error(exc))

        self.ctx.tasks.run(work, done, failed)

    def _model_of(self, definition: GraderDefinition) -> str:
        """The model id a judge exports unless one is typed: its own, else its endpoint's."""
        own = getattr(definition, "model", None)
        if own:
            return str(own)
        config = self._endpoints().get(getattr(definition, "endpoint", None) or "")
        return str(getattr(config, "model", "") or "")

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
