"""A run's spend cap (``run --max-cost USD`` / ``--max-tokens N``).

The judge client asks ``admit()`` right before it sends a call (after it holds a connection slot,
so calls merely queued are not yet admitted) and reports each answer's tokens to ``spend``. Once
the run's spend reaches a cap no call is admitted again and the run's cancel event is set: the
engine stops handing out samples, waits for the calls in flight to answer (they are paid for), and
marks the run "stopped". The spend can pass the cap by at most the calls that were in flight, one
connection window. The run's earlier spend (a resumed run) counts from the start.
"""

from __future__ import annotations

import threading
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject
from studio.core.models.endpoints import EndpointConfig

from .usage import Spent, cost_of, exact_decimal, format_usd

if TYPE_CHECKING:
    from studio.core.store import Library


class BudgetError(StudioError, ValueError):
    """A cap that cannot be used: negative, not a number, or a cost cap on an unpriced endpoint."""


class Caps(BaseModel):
    """The caps a run was given (stored in its settings, so a resume keeps them unless raised)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    max_cost: Decimal | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)

    @property
    def any(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None


def parse_money(text: str, what: str) -> Decimal:
    """A non-negative USD amount from the command line or a form, exactly as written."""
    try:
        value = Decimal(str(text).strip().lstrip("$"))
    except InvalidOperation:
        raise BudgetError(f"{what} must be a number of US dollars, not {text!r}") from None
    if not value.is_finite() or value < 0:
        raise BudgetError(f"{what} must be zero or more US dollars, not {text!r}")
    return value


class Budget:
    """Shared by every judge client of one run (one event loop; locked anyway for the Ray path)."""

    def __init__(self, caps: Caps, cancel: threading.Event, *, spent: Spent | None = None,
                 spent_cost: Fraction = Fraction(0)) -> None:
        self.caps = caps
        self.cancel = cancel
        self.spent = spent or Spent()
        self.cost = spent_cost
        self.stopped = False
        self._lock = threading.Lock()

    def _reached(self) -> bool:
        caps = self.caps
        return ((caps.max_tokens is not None and self.spent.tokens >= caps.max_tokens)
                or (caps.max_cost is not None and self.cost >= Fraction(caps.max_cost)))

    def admit(self) -> bool:
        """May one more call go out? No, once the run's spend has reached a cap."""
        with self._lock:
            if self._reached():
                self._stop()
                return False
            return True

    def spend(self, config: EndpointConfig, prompt_tokens: int, completion_tokens: int,
              cached_tokens: int = 0) -> None:
        with self._lock:
            tally = Spent(1, prompt_tokens, completion_tokens, cached_tokens)
            self.spent.add(tally)
            price = cost_of(tally, config)
            if price is not None:
                self.cost += price
            if self._reached():
                self._stop()

    def _stop(self) -> None:
        self.stopped = True
        self.cancel.set()  # the engine hands out no further samples and waits for calls in flight

    @property
    def reason(self) -> str:
        caps = self.caps
        parts = []
        if caps.max_cost is not None:
            parts.append(f"spent {format_usd(self.cost)} of the ${caps.max_cost} cap (--max-cost)")
        if caps.max_tokens is not None:
            parts.append(f"{self.spent.tokens:,} of {caps.max_tokens:,} tokens (--max-tokens)")
        return "stopped: budget: " + " and ".join(parts) + "; resume with a higher cap to finish"

    def to_json(self) -> JsonObject:
        return {"max_cost": None if self.caps.max_cost is None else str(self.caps.max_cost),
                "max_tokens": self.caps.max_tokens, "spent_tokens": self.spent.tokens,
                "spent_cost_usd": exact_decimal(self.cost), "stopped": self.stopped}


def check_priced(caps: Caps, configs: list[EndpointConfig]) -> None:
    """A cost cap needs every endpoint the run calls to have prices; refused before the run exists."""
    if caps.max_cost is None:
        return
    unpriced = [c.name for c in configs if c.price_input is None or c.price_output is None]
    if unpriced:
        raise BudgetError(
            f"--max-cost needs prices on endpoint {', '.join(unpriced)}: set them with "
            f"`grader-studio endpoints add NAME ... --price-input USD --price-output USD --replace`")


def run_budget(library: Library, run_id: int, max_cost: Decimal | None, max_tokens: int | None,
               cancel: threading.Event) -> Budget:
    """The budget of a run about to grade: its caps, and what its stored results already spent."""
    from .sections import tallied

    _, usage = tallied(library, run_id)  # the run's usage as stored (no summary made)
    return Budget(Caps(max_cost=max_cost, max_tokens=max_tokens), cancel, spent=usage.total,
                  spent_cost=usage.cost or Fraction(0))
