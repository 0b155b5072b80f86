"""The results grid: a run's aggregates, histogram, SQL-backed table and detail pane."""

from .detail import DetailPane
from .model import ResultsModel
from .query import ResultFilter, ResultQuery
from .thread_view import ThreadView
from .view import ResultsView

__all__ = ["DetailPane", "ResultFilter", "ResultQuery", "ResultsModel", "ResultsView", "ThreadView"]
