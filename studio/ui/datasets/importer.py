"""The import page: a file, a format (auto or one of the platforms'), a preview, and the first broken line.

The preview reads the first rows on the GUI thread (``read_dataset(..., limit=...)`` stops there);
the whole file is then read by a background task, so a broken line 40,000 rows down is found, named
by its line number, before anything is stored; only the count and format are kept. Import streams
the file again into one transaction (a chunk at a time, memory flat), also in the background.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from studio.core.datasets import FORMATS, DatasetError, DatasetStream, ParsedDataset, read_dataset
from studio.core.store.datasets import DatasetRecord

from ..context import AppContext
from ..file_dialogs import open_file
from ..messages import describe_error
from ..plain import rich_label
from ..qt import Qt, QtWidgets, Signal
from ..results.columns import one_line
from ..results.status import status_hex

PREVIEW_ROWS = 20
SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv")
FORMAT_LABELS = {"adaptive": "Adaptive", "openai": "OpenAI evals", "letta": "Letta", "mka1": "MKA1",
                 "flat": "Flat columns"}


@dataclass(frozen=True)
class CheckedFile:
    """What the background check of the whole file keeps: not its samples (a million rows)."""

    format: str
    count: int


def check_file(path: Path, fmt: str | None) -> CheckedFile:
    """Every line read and checked, in memory that does not grow with the file: repeated sample
    ids are left to the import, where the database finds them and names both lines (keeping every
    id here would hold a million-row file's ids in the window)."""
    stream = DatasetStream(path, fmt)
    stream.leave_ids_to_store()
    for _ in stream:
        pass
    return CheckedFile(stream.format, stream.count)


def error_text(exc: BaseException) -> str:
    if isinstance(exc, DatasetError):
        where = f"Line {exc.line}: " if exc.line is not None else ""
        return f"{where}{exc.message}"
    return describe_error(exc)


class ImportPanel(QtWidgets.QWidget):
    imported = Signal(object)   # DatasetRecord
    cancelled = Signal()
    checked = Signal(bool)      # the whole file was read: True when every line is good

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.path: Path | None = None
        self.parsed: CheckedFile | None = None
        self.error: DatasetError | None = None
        self._generation = 0
        self._busy = False

        self.file_label = QtWidgets.QLabel()
        self.file_label.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.browse_button = QtWidgets.QPushButton("Choose file…")
        self.format = QtWidgets.QComboBox()
        self.format.addItem("Auto-detect", None)
        for fmt in FORMATS:
            self.format.addItem(FORMAT_LABELS.get(fmt, fmt), fmt)
        self.name = QtWidgets.QLineEdit()
        self.name.setPlaceholderText("dataset name")
        self.replace = QtWidgets.QCheckBox("Replace a dataset of this name")
        self.preview = QtWidgets.QTableWidget(0, 4)
        self.preview.setHorizontalHeaderLabels(["Sample", "Input", "Completion", "Expected"])
        self.preview.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.preview.verticalHeader().setVisible(False)
        self.preview.setWordWrap(False)
        for col, width in enumerate((110, 300, 300, 160)):
            self.preview.setColumnWidth(col, width)
        self.preview.horizontalHeader().setStretchLastSection(True)
        self.status = QtWidgets.QLabel()
        self.status.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.import_button = QtWidgets.QPushButton("Import")
        self.import_button.setDefault(True)
        self.cancel_button = QtWidgets.QPushButton("Cancel")

        top = QtWidgets.QFormLayout()
        file_row = QtWidgets.QHBoxLayout()
        file_row.addWidget(self.file_label, 1)
        file_row.addWidget(self.browse_button)
        top.addRow("File", file_row)
        top.addRow("Format", self.format)
        name_row = QtWidgets.QHBoxLayout()
        name_row.addWidget(self.name, 1)
        name_row.addWidget(self.replace)
        top.addRow("Name", name_row)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.import_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(rich_label("<b>Import a dataset</b> — JSONL or CSV; drop a file anywhere here"))
        layout.addLayout(top)
        layout.addWidget(QtWidgets.QLabel("Preview (first rows)"))
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

        self.browse_button.clicked.connect(self.choose_file)
        self.format.currentIndexChanged.connect(self._reread)
        self.name.textChanged.connect(self._update_button)
        self.import_button.clicked.connect(self.do_import)
        self.cancel_button.clicked.connect(self.cancelled.emit)
        self._update_button()

    # -- choosing ---------------------------------------------------------------------------------------
    def choose_file(self) -> None:
        path = open_file(
            self, "Import dataset", str(self.path.parent) if self.path else "",
            "Datasets (*.jsonl *.ndjson *.json *.csv);;All files (*)")
        if path:
            self.set_path(path)

    def set_path(self, path: str | Path, fmt: str | None = None) -> None:
        self.path = Path(path)
        self.file_label.setText(html.escape(str(self.path)))
        existing = {r.name for r in self.ctx.library.datasets.list()}
        name = self.path.stem
        self.name.setText(name)
        self.replace.setChecked(False)
        self.replace.setVisible(name in existing)
        index = self.format.findData(fmt)
        if index >= 0 and index != self.format.currentIndex():
            self.format.setCurrentIndex(index)  # triggers _reread
        else:
            self._reread()

    def set_format(self, fmt: str | None) -> None:
        self.format.setCurrentIndex(max(0, self.format.findData(fmt)))

    # -- reading ---------------------------------------------------------------------------------------
    def _reread(self) -> None:
        self._generation += 1
        self.parsed = None
        self.error = None
        self.preview.setRowCount(0)
        if self.path is None:
            self._say("Choose a JSONL or CSV file, or drop one here.")
            self._update_button()
            return
        fmt = self.format.currentData()
        try:
            head = read_dataset(self.path, fmt, limit=PREVIEW_ROWS)
        except Exception as exc:  # DatasetError names the line; anything else still gets a sentence
            self._fail(exc)
            return
        self._fill_preview(head)
        self._say(f"Format {head.format}. Reading the whole file…")
        generation, path = self._generation, self.path
        self._busy = True
        self._update_button()
        self.ctx.tasks.run(lambda: check_file(path, fmt),
                           lambda parsed: self._on_checked(generation, parsed),
                           lambda exc: self._on_check_failed(generation, exc))

    def _fill_preview(self, parsed: ParsedDataset) -> None:
        samples = parsed.samples[:PREVIEW_ROWS]
        self.preview.setRowCount(len(samples))
        for row, sample in enumerate(samples):
            for col, text in enumerate((sample.id, sample.input_text(), sample.completion or "", sample.expected or "")):
                item = QtWidgets.QTableWidgetItem(one_line(text))
                if len(text) > 40:
                    item.setToolTip(text[:2000])
                self.preview.setItem(row, col, item)

    def _on_checked(self, generation: int, parsed: CheckedFile) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self.parsed = parsed
        self._say(f"✓ {parsed.count:,} samples read, format {parsed.format}. Ready to import.",
                  colour=status_hex("ok"))
        self._update_button()
        self.checked.emit(True)

    def _on_check_failed(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        self.error = exc if isinstance(exc, DatasetError) else None
        self._say(f"✗ {error_text(exc)}\nNothing will be imported until the file is fixed "
                  "(or another format is chosen).", colour=status_hex("error"))
        self._update_button()
        self.checked.emit(False)

    # -- importing -------------------------------------------------------------------------------------
    def do_import(self) -> None:
        parsed, name = self.parsed, self.name.text().strip()
        if parsed is None or not name or self.path is None:
            return
        replace, source = self.replace.isChecked(), self.path.name
        self._busy = True
        self._update_button()
        self._say(f"Importing {parsed.count:,} samples into “{name}”…")
        library, path = self.ctx.library, self.path

        def write() -> DatasetRecord:
            # read again as a stream: a line changed since the check still rolls everything back
            return library.datasets.create(name, DatasetStream(path, parsed.format).rows(), format=parsed.format,
                                           source=source, replace=replace)

        self.ctx.tasks.run(write, self._on_imported, self._on_import_failed)

    def _on_imported(self, record: DatasetRecord) -> None:
        self._busy = False
        self._say(f"Imported {record.sample_count:,} samples into “{record.name}”.", colour=status_hex("ok"))
        self._update_button()
        self.ctx.datasets_changed.emit()
        self.imported.emit(record)

    def _on_import_failed(self, exc: BaseException) -> None:
        self._busy = False
        message = error_text(exc)  # a repeated id found by the store names its line as the check's do
        if "already exists" in message:
            self.replace.setVisible(True)
        self._say(f"✗ {message}", colour=status_hex("error"))
        self._update_button()

    def _update_button(self) -> None:
        self.import_button.setEnabled(not self._busy and self.parsed is not None and bool(self.name.text().strip()))

    def _say(self, text: str, colour: str = "#5b6170") -> None:
        self.status.setText(f"<span style='color:{colour}; white-space:pre-wrap'>{html.escape(text)}</span>")
