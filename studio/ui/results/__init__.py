"""The results grid: a run's aggregates, histogram, SQL-backed table and detail pane."""

from studio.core.store.results_query import ResultFilter, ResultQuery

from .detail import DetailPane
from .model import ResultsModel
from .thread_view import ThreadView
from .view import ResultsView

__all__ = ["DetailPane", "ResultFilter", "ResultQuery", "ResultsModel", "ResultsView", "ThreadView"]
