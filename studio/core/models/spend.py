"""A run's spend, priced exactly: tokens and judge calls per grader and per endpoint, and their cost.

Why here, below the store: pricing is a rule about plain values (tokens times an endpoint's price
per million, in ``Fraction``: prices are exact decimals, so totals add up to the cent and beyond;
rounding happens only in ``format_usd``). The store answers a run's spend as counted from its rows
(store/run_spend.py); the engine asks for it (engine/usage.py ``run_usage``) and prices it here, so
nothing climbs back from the numbers to a layer that reads the library. A cost is None when an
endpoint has no prices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from studio.core.json_types import JsonObject

from .endpoints import EndpointConfig

PER = 1_000_000  # prices are per million tokens


@dataclass
class Spent:
    """Tokens and judge calls answered: what was spent (a run's results add up to the ledger's
    ``Tally``, store/ledger.py). Cache hits are not calls: they cost nothing; a call that failed,
    retries included, reported no usage and is not counted."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def add(self, other: Spent) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def cost_range(config: EndpointConfig | None, prompt_tokens: int,
               max_completion_tokens: int) -> tuple[Fraction, Fraction] | None:
    """The cost of calls not yet made, as (low, high); None without input and output prices. Low:
    every prompt token served from the endpoint's prompt cache (when that is cheaper) and no answer
    token; high: none cached and every answer at its token limit. Read by a run's dry run and by
    generate's."""
    if config is None or config.price_input is None or config.price_output is None:
        return None
    cached_price = config.cached_input_price  # None only without an input price, checked above
    if cached_price is None:
        return None
    low = Fraction(prompt_tokens) * Fraction(min(config.price_input, cached_price)) / PER
    full = Fraction(prompt_tokens) * Fraction(config.price_input) / PER
    return low, full + Fraction(max_completion_tokens) * Fraction(config.price_output) / PER


def cost_of(tally: Spent, config: EndpointConfig | None) -> Fraction | None:
    """Exact USD for ``tally`` at ``config``'s prices; None when the input or output price is unknown.

    The prompt tokens the endpoint served from its prompt cache (a part of ``prompt_tokens``) cost
    the cached-input price where one is set, else the input price.
    """
    if config is None or config.price_input is None or config.price_output is None:
        return None
    cached_price = config.cached_input_price  # None only without an input price, checked above
    if cached_price is None:
        return None
    cached = min(max(tally.cached_tokens, 0), tally.prompt_tokens)
    return (Fraction(tally.prompt_tokens - cached) * Fraction(config.price_input)
            + Fraction(cached) * Fraction(cached_price)
            + Fraction(tally.completion_tokens) * Fraction(config.price_output)) / PER


def exact_decimal(value: Fraction) -> str:
    """A cost as an exact decimal string: prices are decimals and the divisor a power of ten, so
    every cost has a finite decimal expansion (no rounding here)."""
    digits = 0
    scaled = value
    while scaled.denominator != 1:
        scaled *= 10
        digits += 1
        if digits > 60:  # not a decimal fraction after all: say so rather than loop
            return f"{Decimal(value.numerator) / Decimal(value.denominator):f}"
    return f"{Decimal(scaled.numerator).scaleb(-digits):f}"


def usd(value: Fraction | None) -> str | None:
    """A cost as a summary states it: an exact decimal string, None when unknown."""
    return None if value is None else exact_decimal(value)


def format_usd(value: Fraction | None) -> str:
    """For people: cents for amounts of a dollar and more, four significant decimals below."""
    if value is None:
        return "no price"
    amount = Decimal(value.numerator) / Decimal(value.denominator)
    if amount >= 1 or amount == 0:
        return f"${amount:,.2f}"
    return f"${amount:.4g}" if amount >= Decimal("0.0001") else f"${amount:.2e}"


@dataclass
class Usage:
    """A run's usage: by grader key, by endpoint name, and in total (costs may be None)."""

    graders: dict[str, Spent] = field(default_factory=dict)
    endpoints: dict[str, Spent] = field(default_factory=dict)
    total: Spent = field(default_factory=Spent)
    grader_cost: dict[str, Fraction | None] = field(default_factory=dict)
    endpoint_cost: dict[str, Fraction | None] = field(default_factory=dict)
    cost: Fraction | None = None
    #: endpoints that have no prices (their tokens are counted, their cost is not)
    unpriced: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        def line(tally: Spent, cost: Fraction | None) -> JsonObject:
            return {"calls": tally.calls, "prompt_tokens": tally.prompt_tokens,
                    "completion_tokens": tally.completion_tokens, "cached_tokens": tally.cached_tokens,
                    "cost_usd": None if cost is None else exact_decimal(cost)}

        return {
            "total": line(self.total, self.cost),
            "graders": {k: line(t, self.grader_cost.get(k)) for k, t in self.graders.items()},
            "endpoints": {k: line(t, self.endpoint_cost.get(k)) for k, t in self.endpoints.items()},
            "unpriced_endpoints": self.unpriced,
        }

    def lines(self) -> list[str]:
        """One line per grader and per endpoint, for a terminal (empty when no tokens were spent)."""
        if not self.total.tokens and not self.total.calls:
            return []
        out = [f"usage: {_tally_text(self.total)}, cost {format_usd(self.cost)}"
               + (f" (no prices for {', '.join(self.unpriced)})" if self.unpriced else "")]
        out += [f"  grader {k}: {_tally_text(t)}, {format_usd(self.grader_cost.get(k))}"
                for k, t in self.graders.items()]
        out += [f"  endpoint {k}: {_tally_text(t)}, {format_usd(self.endpoint_cost.get(k))}"
                for k, t in self.endpoints.items()]
        return out


def _tally_text(t: Spent) -> str:
    return (f"{t.calls:,} calls, {t.prompt_tokens:,} prompt tokens ({t.cached_tokens:,} cached), "
            f"{t.completion_tokens:,} completion tokens")




def priced(spent: Mapping[str, Mapping[str, Spent]], configs: Mapping[str, EndpointConfig | None]) -> Usage:
    """The run's ``Usage``: ``spent`` (per grader key, per endpoint name) totalled per grader, per
    endpoint and in all, each priced at its endpoint's ``configs`` (None: no prices known)."""
    usage = Usage()
    costs: list[Fraction | None] = []
    for key, tallies in spent.items():
        grader = usage.graders.setdefault(key, Spent())
        grader_costs: list[Fraction | None] = []
        for name, tally in tallies.items():
            grader.add(tally)
            usage.endpoints.setdefault(name, Spent()).add(tally)
            usage.total.add(tally)
            grader_costs.append(cost_of(tally, configs.get(name)))
        usage.grader_cost[key] = _sum(grader_costs)
        costs.extend(grader_costs)
    for name, tally in usage.endpoints.items():
        usage.endpoint_cost[name] = cost_of(tally, configs.get(name))
    names = sorted({name for tallies in spent.values() for name in tallies})
    usage.unpriced = [n for n in names if cost_of(Spent(), configs.get(n)) is None]
    usage.cost = _sum(costs)
    return usage


def _sum(costs: list[Fraction | None]) -> Fraction | None:
    """A total is known only when every part is (an unpriced endpoint leaves it unknown)."""
    known = [c for c in costs if c is not None]
    if len(known) < len(costs):
        return None
    return sum(known, Fraction(0))
