"""``DatasetsView``: the library's datasets, importing (file dialog or drag and drop), browsing samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.store.datasets import DatasetRecord

from ..context import AppContext
from ..messages import describe_error
from ..plain import breakable, esc, rich_label
from ..qt import Qt, QtCore, QtGui, QtWidgets, Signal
from ..results.thread_view import ThreadView
from .generate import GenerateDialog, provenance_text
from .importer import SUFFIXES, ImportPanel
from .models import DatasetsModel, SamplesModel, load_sample

if TYPE_CHECKING:
    from studio.core.store.endpoint_trust import Pending


def dropped_file(mime: QtCore.QMimeData) -> Path | None:
    """The first local dataset file of a drag, if any."""
    for url in mime.urls():
        if url.isLocalFile():
            path = Path(url.toLocalFile())
            if path.suffix.lower() in SUFFIXES:
                return path
    return None


class DatasetsView(QtWidgets.QWidget):
    dataset_selected = Signal(str)

    def __init__(self, ctx: AppContext, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        #: the window's question before a key goes to an endpoint a teammate changed (Generate's)
        self.approve_endpoint: Callable[[Pending], bool] | None = None
        self.setAcceptDrops(True)
        self.datasets = DatasetsModel(ctx, self)
        self.samples = SamplesModel(ctx, self)

        self.list = QtWidgets.QTableView()
        self.list.setModel(self.datasets)
        self.list.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.list.verticalHeader().setVisible(False)
        self.list.horizontalHeader().setStretchLastSection(True)
        self.list.setWordWrap(False)
        for col, width in enumerate((150, 70, 70)):
            self.list.setColumnWidth(col, width)
        self.import_button = QtWidgets.QPushButton("Import…")
        self.import_button.setToolTip("Import a JSONL or CSV file (or drop one on this view)")
        self.delete_button = QtWidgets.QPushButton("Delete")
        self.delete_button.setEnabled(False)
        self.generate_button = QtWidgets.QPushButton("Generate…")
        self.generate_button.setToolTip("Call a model on a dataset's inputs and store its answers as a new dataset")

        self.sample_table = QtWidgets.QTableView()
        self.sample_table.setModel(self.samples)
        self.sample_table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.sample_table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.sample_table.verticalHeader().setVisible(False)
        self.sample_table.verticalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Fixed)
        self.sample_table.verticalHeader().setDefaultSectionSize(self.sample_table.fontMetrics().height() + 8)
        self.sample_table.setWordWrap(False)
        self.sample_table.setAlternatingRowColors(True)
        for col, width in enumerate(SamplesModel.WIDTHS):
            self.sample_table.setColumnWidth(col, width)
        self.thread_view = ThreadView(empty="Select a sample to read it as a conversation.")
        self.header = QtWidgets.QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.header.setWordWrap(True)  # a long name or error wraps; it never widens the window
        self.provenance = QtWidgets.QLabel()  # a generated dataset's source, endpoint, model, cost
        self.provenance.setTextFormat(Qt.TextFormat.PlainText)
        self.provenance.setWordWrap(True)
        self.provenance.setVisible(False)

        browse = QtWidgets.QWidget()
        browse_layout = QtWidgets.QVBoxLayout(browse)
        browse_layout.setContentsMargins(0, 0, 0, 0)
        browse_layout.addWidget(self.header)
        browse_layout.addWidget(self.provenance)
        samples_split = QtWidgets.QSplitter(Qt.Orientation.Vertical)
        samples_split.addWidget(self.sample_table)
        samples_split.addWidget(self.thread_view)
        samples_split.setSizes([300, 400])
        browse_layout.addWidget(samples_split, 1)
        self.empty = QtWidgets.QLabel(
            "No datasets yet.\n\nImport a JSONL or CSV file with “Import…”, or drop it here.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setStyleSheet("color: #8a8f98; font-size: 14px")
        self.importer = ImportPanel(ctx)
        self.pages = QtWidgets.QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(browse)
        self.pages.addWidget(self.importer)
        self.browse_page = browse
        self.generate_dialog: GenerateDialog | None = None

        side = QtWidgets.QWidget()
        side_layout = QtWidgets.QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(rich_label("<b>Datasets</b>"))
        side_layout.addWidget(self.list, 1)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.generate_button)
        buttons.addWidget(self.delete_button)
        side_layout.addLayout(buttons)
        splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(side)
        splitter.addWidget(self.pages)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([300, 900])
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(splitter)

        self.import_button.clicked.connect(self.choose_import)
        self.delete_button.clicked.connect(self.delete_selected)
        self.generate_button.clicked.connect(lambda: self.open_generate().show())
        self.list.selectionModel().currentRowChanged.connect(self._on_dataset)
        self.sample_table.selectionModel().currentRowChanged.connect(self._on_sample)
        self.importer.imported.connect(self._on_imported)
        self.importer.cancelled.connect(self._leave_import)
        ctx.datasets_changed.connect(self.reload)
        self.reload()

    # -- public API -----------------------------------------------------------------------------------
    def reload(self) -> None:
        current = self.current_dataset()
        self.datasets.reload()
        if current is not None and self.datasets.row_of(current.name) is not None:
            self.select_dataset(current.name)
        elif self.pages.currentWidget() is not self.importer:
            self._show_default()
            if self.datasets.rowCount():  # open on the first dataset rather than an empty pane
                self.list.setCurrentIndex(self.datasets.index(0, 0))

    def current_dataset(self) -> DatasetRecord | None:
        index = self.list.currentIndex()
        return self.datasets.record(index.row()) if index.isValid() else None

    def select_dataset(self, name: str) -> None:
        row = self.datasets.row_of(name)
        if row is not None:
            self.list.setCurrentIndex(self.datasets.index(row, 0))

    def select_sample(self, idx: int) -> None:
        self.sample_table.setCurrentIndex(self.samples.index(idx, 0))

    def choose_import(self) -> None:
        self.pages.setCurrentWidget(self.importer)
        self.importer.choose_file()

    def open_import(self, path: str | Path, fmt: str | None = None) -> ImportPanel:
        """Show the import page for ``path`` (drag and drop, the file dialog, tests)."""
        self.pages.setCurrentWidget(self.importer)
        self.importer.set_path(path, fmt)
        return self.importer

    def open_generate(self) -> GenerateDialog:
        """Datasets ▸ Generate outputs…, on the selected dataset's inputs; the new dataset opens when
        the generation ends (complete or cancelled), its provenance shown."""
        current = self.current_dataset()
        dialog = GenerateDialog(self.ctx, current.name if current else None, self)
        if self.approve_endpoint is not None:
            dialog.approve_endpoint = self.approve_endpoint
        dialog.generated.connect(self.select_dataset)
        self.generate_dialog = dialog  # the latest one (tests, and the window's menu)
        return dialog

    def delete_selected(self) -> None:
        record = self.current_dataset()
        if record is None:
            return
        answer = QtWidgets.QMessageBox.question(
            self, "Delete dataset", f"Delete “{record.name}” ({record.sample_count:,} samples)? "
            "Runs that used it keep their results.")
        if answer != QtWidgets.QMessageBox.StandardButton.Yes:
            return
        try:
            self.ctx.library.datasets.delete(record.name)
        except Exception as exc:
            self.header.setText(esc(breakable(describe_error(exc))))
            return
        self.ctx.datasets_changed.emit()

    # -- drag and drop ---------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        if dropped_file(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QtGui.QDragMoveEvent) -> None:
        self.dragEnterEvent(event)  # type: ignore[arg-type]

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        path = dropped_file(event.mimeData())
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_import(path)

    # -- reactions --------------------------------------------------------------------------------------
    def _show_default(self) -> None:
        self.pages.setCurrentWidget(self.browse_page if self.datasets.rowCount() else self.empty)

    def _on_dataset(self, current: QtCore.QModelIndex, _previous: QtCore.QModelIndex) -> None:
        record = self.datasets.record(current.row()) if current.isValid() else None
        self.delete_button.setEnabled(record is not None)
        self.samples.set_dataset(record)
        self.thread_view.clear_thread()
        if record is None:
            self.header.setText("")
            self.provenance.setVisible(False)
            return
        described = provenance_text(record.provenance)
        self.provenance.setText(described)
        self.provenance.setVisible(bool(described))
        self.header.setText(f"<b>{esc(record.name)}</b> · {record.sample_count:,} samples · format {record.format}"
                            f" · from {record.source or '?'}")
        if self.pages.currentWidget() is not self.importer:
            self.pages.setCurrentWidget(self.browse_page)
        if record.sample_count:
            self.select_sample(0)
        self.dataset_selected.emit(record.name)

    def _on_sample(self, current: QtCore.QModelIndex, _previous: QtCore.QModelIndex) -> None:
        if not current.isValid() or self.samples.dataset_id is None:
            self.thread_view.clear_thread()
            return
        try:
            sample = load_sample(self.ctx.library.engine, self.samples.dataset_id, current.row())
        except Exception as exc:
            self.thread_view.clear_thread(describe_error(exc))
            return
        self.thread_view.set_sample(sample)

    def _on_imported(self, record: DatasetRecord) -> None:
        self.pages.setCurrentWidget(self.browse_page)
        self.select_dataset(record.name)

    def _leave_import(self) -> None:
        self._show_default()
