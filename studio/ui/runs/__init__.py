"""The run panel: start, watch and cancel runs; reopen and resume past ones."""

from .history import RunsModel
from .panel import RunPanel
from .worker import RunWorker

__all__ = ["RunPanel", "RunWorker", "RunsModel"]
