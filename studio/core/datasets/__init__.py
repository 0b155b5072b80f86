"""Dataset importers: JSONL/CSV files in the platforms' row shapes, read all or nothing."""

from .readers import DatasetError, DatasetStream, ParsedDataset, read_dataset
from .shapes import FORMATS, detect_format, row_to_sample

__all__ = ["FORMATS", "DatasetError", "DatasetStream", "ParsedDataset", "detect_format", "read_dataset", "row_to_sample"]
