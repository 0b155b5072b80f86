"""A run's spend as its stored rows say it: tokens and judge calls per grader and endpoint.

The engine asks once (engine/usage.py ``run_usage``: which graders, their rows' place and the
endpoint a row that names none was sent to) and this answers once, as one ``RunSpend``: each
grader's tokens and calls per endpoint name (a completed run's from its stored tallies, where its
end kept them: ``endpoint_rows``' rows under each grader's entry, else counted from its rows) and
the configuration of every endpoint named, for its prices (models/spend.py prices them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from studio.core.json_types import JsonArray, JsonObject
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.spend import Spent

from .errors import NotFound
from .run_graders import grader_source, stored_entries

if TYPE_CHECKING:
    from .library import Library

#: one endpoint's part of a grader's rows: [endpoint named by its rows (None: none), calls, prompt,
#: completion and cached tokens]; a JSON array: kept in a completed run's stored tallies
#: (``with_usage``) and read back from them as decoded JSON (``stored_usage``), checked where read
EndpointRow: TypeAlias = JsonArray


@dataclass(frozen=True)
class SpendOf:
    """What the store needs to count one grader's spend: where its rows are (a run of one grader:
    the run's ``results``; a suite run: its slot's), the tokens its tally counted (none: a builtin
    run skips the JSON scan) and the endpoint its rows that name none were sent to."""

    key: str
    slot: int = 0
    suite: bool = False
    dataset_id: int = 0
    tokens: int = 0
    endpoint: str | None = None


@dataclass(frozen=True)
class RunSpend:
    """The store's answer: each grader's tokens and calls by endpoint name, and every endpoint's
    configuration (None: removed since the run; its tokens count, its price is unknown)."""

    graders: dict[str, dict[str, Spent]]
    configs: dict[str, EndpointConfig | None]


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


def run_spend(library: Library, run_id: int, graders: Sequence[SpendOf]) -> RunSpend:
    """The spend of ``graders`` in run ``run_id``, with the endpoints' configurations. What the
    store holds of each grader is read at once (a completed run's stored entries, its aggregates
    read once; where each grader's rows are), then each one's spend is read from its entry or
    counted from its rows."""
    entries = stored_entries(library.runs.raw(run_id))
    sources = [grader_source(run_id, g.suite, g.slot, g.key, g.dataset_id) for g in graders]
    counted: dict[str, tuple[str | None, list[EndpointRow]]] = {}
    for grader, (source, params) in zip(graders, sources, strict=True):
        rows = stored_usage(entries.get((grader.slot, grader.key)))
        if rows is None:
            rows = counted_rows(library, source, params, grader.tokens)
        counted[grader.key] = (grader.endpoint, rows)
    names = sorted({endpoint or fallback or "(no endpoint)" for fallback, rows in counted.values()
                    for endpoint, calls, prompt, completion, cached in rows if int(calls or 0) or
                    int(prompt or 0) + int(completion or 0)})
    configs = endpoint_configs(library, names)
    spent: dict[str, dict[str, Spent]] = {}
    for key, (fallback, rows) in counted.items():
        out = spent.setdefault(key, {})
        for endpoint, calls, prompt, completion, cached in rows:
            tally = Spent(int(calls or 0), int(prompt or 0), int(completion or 0), int(cached or 0))
            if tally.calls or tally.tokens:
                out.setdefault(endpoint or fallback or "(no endpoint)", Spent()).add(tally)
    return RunSpend(graders=spent, configs=configs)


def endpoint_configs(library: Library, names: Iterable[str]) -> dict[str, EndpointConfig | None]:
    """Each named endpoint's configuration (None: removed since; its tokens count, its price is unknown)."""
    configs: dict[str, EndpointConfig | None] = {}
    for name in names:
        try:
            configs[name] = library.endpoints.get(name)
        except NotFound:
            configs[name] = None
    return configs


def endpoint_rows(library: Library, run_id: int, suite: bool, slot: int, key: str, dataset_id: int,
                  tokens: int) -> list[EndpointRow]:
    """One grader's [endpoint named by its rows (None: none), calls, prompt, completion and cached
    tokens] per endpoint, from its stored rows; ``tokens``: the tokens its tally counted."""
    return counted_rows(library, *grader_source(run_id, suite, slot, key, dataset_id), tokens)


def counted_rows(library: Library, source: str, params: tuple[int | str, ...], tokens: int) -> list[EndpointRow]:
    """``endpoint_rows`` of the grader whose rows are ``source`` (``run_graders.grader_source``)."""
    with library.engine.connect() as conn:
        if not tokens and conn.exec_driver_sql(
                f"SELECT 1 FROM ({source}) AS src WHERE details IS NOT NULL AND instr(details, '\"endpoint\"') > 0"
                " LIMIT 1", params).first() is None:
            return []  # no tokens and no judge calls (a builtin run of a million rows skips the JSON scan)
        rows = [*conn.exec_driver_sql(_SINGLE.format(source=source), params),
                *conn.exec_driver_sql(_COMPONENTS.format(source=source), params)]
    return [[row.endpoint, int(row.calls or 0), int(row.p or 0), int(row.c or 0), int(row.k or 0)] for row in rows]


def stored_usage(entry: JsonObject | None) -> list[EndpointRow] | None:
    """A completed run's stored ``endpoint_rows`` of a grader (``entry``: its stored entry,
    ``run_graders.stored_entries``), None for any other run or one stored without them."""
    usage = None if entry is None else entry.get("usage")
    return usage if isinstance(usage, list) else None


def with_usage(library: Library, run_id: int, stored: JsonObject, quiet: set[int]) -> JsonObject:
    """A completed run's stored tallies (the ``run_graders.STORED_KEY`` entry) with each grader's
    tokens and calls per endpoint (``endpoint_rows``, under "usage": what ``run_spend`` reads once
    the run is complete, instead of a pass of its own). A grader that spent no token and whose rows,
    as written, name no endpoint (its slot in ``quiet``) has none (the probe of ``endpoint_rows``
    would find none: a built-in run's rows are not read again)."""
    row = library.runs.raw(run_id)
    for entry in stored["graders"]:
        counted = entry["tally"]
        tokens = counted["prompt_tokens"] + counted["completion_tokens"]
        if not tokens and entry["slot"] in quiet:
            entry["usage"] = []
            continue
        entry["usage"] = endpoint_rows(library, run_id, bool(row.suite), entry["slot"], entry["key"], row.dataset_id,
                                       tokens)
    return stored
