"""Token usage and cost of a run: totals per grader and per endpoint, priced exactly.

Each result row stores the tokens its judge calls spent (prompt, completion, and the part of the
prompt the endpoint served from its prompt cache); a judge's details name its endpoint and list its
calls, a composite's details name each component's. Cost is tokens x the endpoint's price per
million, computed in ``Fraction`` (prices are exact decimals), so totals add up to the cent and
beyond; rounding happens only in ``format_usd``. A cost is None when an endpoint has no prices.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.errors import NotFound
from studio.core.store.run_graders import grader_source, stored_entry

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

    def to_json(self) -> dict[str, Any]:
        def line(tally: Spent, cost: Fraction | None) -> dict[str, Any]:
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


# a judge's row names its endpoint; a composite's row names each component's. ``{source}`` is the
# section's rows (``sections.section_source``): the run's results, or one grader's rows of a suite
_SINGLE = """SELECT json_extract(details, '$.endpoint') AS endpoint, count(*) AS n,
    sum(CAST(prompt_tokens AS DOUBLE PRECISION)) AS p, sum(CAST(completion_tokens AS DOUBLE PRECISION)) AS c,
    sum(CAST(cached_tokens AS DOUBLE PRECISION)) AS k,
    sum((SELECT count(*) FROM json_each(details, '$.calls') AS call
         WHERE coalesce(CAST(json_extract(call.value, '$.cached') AS DOUBLE PRECISION), 0) = 0
           AND coalesce(CAST(json_extract(call.value, '$.failed') AS DOUBLE PRECISION), 0) = 0)) AS calls
  FROM ({source}) AS src WHERE (details IS NULL OR json_extract(details, '$.components') IS NULL) GROUP BY 1"""
_COMPONENTS = """SELECT json_extract(part.value, '$.endpoint') AS endpoint,
    sum(coalesce(CAST(json_extract(part.value, '$.prompt_tokens') AS DOUBLE PRECISION), 0)) AS p,
    sum(coalesce(CAST(json_extract(part.value, '$.completion_tokens') AS DOUBLE PRECISION), 0)) AS c,
    sum(coalesce(CAST(json_extract(part.value, '$.cached_tokens') AS DOUBLE PRECISION), 0)) AS k,
    sum(coalesce(CAST(json_extract(part.value, '$.judge_calls') AS DOUBLE PRECISION), 0)) AS calls
  FROM ({source}) AS src, json_each(src.details, '$.components') AS part
  WHERE src.details IS NOT NULL AND json_extract(src.details, '$.components') IS NOT NULL GROUP BY 1"""


def section_usage(library: Library, run_id: int, section: Any) -> dict[str, Spent]:
    """The section's (engine/sections.py ``Section``) tokens and calls per endpoint name (rows
    naming none: the section's own). A completed run's are read from its stored tallies (the
    ``usage`` of its grader's entry, stored at its end: ``endpoint_rows``)."""
    rows = stored_usage(library.runs.raw(run_id), section.slot, section.key)
    if rows is None:
        rows = endpoint_rows(library, run_id, section.suite, section.slot, section.key, section.dataset_id,
                             section.summary.tokens)
    out: dict[str, Spent] = {}
    for endpoint, calls, prompt, completion, cached in rows:
        tally = Spent(int(calls or 0), int(prompt or 0), int(completion or 0), int(cached or 0))
        if not (tally.calls or tally.tokens):
            continue
        name = endpoint or section.endpoint or "(no endpoint)"
        out.setdefault(name, Spent()).add(tally)
    return out


def endpoint_rows(library: Library, run_id: int, suite: bool, slot: int, key: str, dataset_id: int,
                  tokens: int) -> list[list[Any]]:
    """One grader's [endpoint named by its rows (None: none), calls, prompt, completion and cached
    tokens] per endpoint, from its stored rows; ``tokens``: the tokens its tally counted."""
    source, params = grader_source(run_id, suite, slot, key, dataset_id)
    with library.engine.connect() as conn:
        if not tokens and conn.exec_driver_sql(
                f"SELECT 1 FROM ({source}) AS src WHERE details IS NOT NULL AND instr(details, '\"endpoint\"') > 0"
                " LIMIT 1", params).first() is None:
            return []  # no tokens and no judge calls (a builtin run of a million rows skips the JSON scan)
        rows = [*conn.exec_driver_sql(_SINGLE.format(source=source), params),
                *conn.exec_driver_sql(_COMPONENTS.format(source=source), params)]
    return [[row.endpoint, int(row.calls or 0), int(row.p or 0), int(row.c or 0), int(row.k or 0)] for row in rows]


def stored_usage(row: Any, slot: int, key: str) -> list[list[Any]] | None:
    """A completed run's stored ``endpoint_rows`` of grader ``key`` (``row``: ``runs.raw``), None
    for any other run or one stored without them."""
    entry = stored_entry(row, slot, key)
    usage = None if entry is None else entry.get("usage")
    return usage if isinstance(usage, list) else None


def endpoint_configs(library: Library, names: Iterable[str]) -> dict[str, EndpointConfig | None]:
    configs: dict[str, EndpointConfig | None] = {}
    for name in names:
        try:
            configs[name] = library.endpoints.get(name)
        except NotFound:  # removed since the run: its tokens count, its price is unknown
            configs[name] = None
    return configs


def run_usage(library: Library, run: Any) -> Usage:
    """Totals per grader and per endpoint of a run (engine/sections.py ``RunSections``: usage is
    read by ``load_run``, which imports this module), priced with each endpoint's current prices."""
    per_section = {s.key: section_usage(library, run.info.id, s) for s in run.sections}
    names = sorted({name for tallies in per_section.values() for name in tallies})
    configs = endpoint_configs(library, names)
    usage = Usage()
    costs: list[Fraction | None] = []
    for key, tallies in per_section.items():
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
    usage.unpriced = [n for n in names if cost_of(Spent(), configs.get(n)) is None]
    usage.cost = _sum(costs)
    return usage


def _sum(costs: list[Fraction | None]) -> Fraction | None:
    """A total is known only when every part is (an unpriced endpoint leaves it unknown)."""
    known = [c for c in costs if c is not None]
    if len(known) < len(costs):
        return None
    return sum(known, Fraction(0))
