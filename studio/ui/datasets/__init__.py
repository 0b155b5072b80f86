"""The datasets view: import JSONL/CSV files (dialog or drag and drop) and browse samples as threads."""

from .importer import ImportPanel
from .models import DatasetsModel, SamplesModel
from .view import DatasetsView

__all__ = ["DatasetsModel", "DatasetsView", "ImportPanel", "SamplesModel"]
