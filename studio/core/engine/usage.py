"""Token usage and cost of a run: totals per grader and per endpoint, priced exactly.

Each result row stores the tokens its judge calls spent (prompt, completion, and the part of the
prompt the endpoint served from its prompt cache); a judge's details name its endpoint and list its
calls, a composite's details name each component's. The engine asks the store once for a run's
spend (store/run_spend.py ``run_spend``: each grader's tokens and calls per endpoint, and the
endpoints' configurations) and prices it (models/spend.py: exact ``Fraction`` arithmetic, rounding
only in ``format_usd``). A cost is None when an endpoint has no prices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from studio.core.models.spend import (
    PER,
    Spent,
    Usage,
    cost_of,
    cost_range,
    exact_decimal,
    format_usd,
    priced,
)
from studio.core.store import Library
from studio.core.store.run_spend import SpendOf, endpoint_configs, endpoint_rows, run_spend

if TYPE_CHECKING:
    from studio.core.models import RunInfo


class Spending(Protocol):
    """A run as its usage is asked of the store (engine/sections.py ``RunSections``)."""

    @property
    def info(self) -> RunInfo: ...

    def spend_of(self) -> list[SpendOf]: ...

__all__ = ["PER", "Spent", "Usage", "cost_of", "cost_range", "endpoint_configs", "endpoint_rows", "exact_decimal",
           "format_usd", "run_usage"]


def run_usage(library: Library, run: Spending) -> Usage:
    """Totals per grader and per endpoint of a run's sections, priced with each endpoint's current
    prices, read again (``load_run`` reads them once with the sections: ``RunSections.usage``): the
    store answers each section's spend and the endpoints' configurations once."""
    answer = run_spend(library, run.info.id, run.spend_of())
    return priced(answer.graders, answer.configs)
