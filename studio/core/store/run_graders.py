"""A run's graders and each grader's results: one reading for runs of one grader and suite runs.

This is the interface reports, verdicts and exports build on: ``run_graders(library, run_id)`` lists
the graders of a run (key, version, weight, pass threshold, score range) by slot, and
``grader_results(library, run_id, key)`` gives one grader's result per sample, as ``runs show``
gives them (``grader`` is the key). ``graders_with_results`` returns both at once.

A suite run stores a plain score (status ok, nothing else said) only in the sample's row, under
``scores`` by grader key; every other per-grader result is a ``grader_results`` row. The SQL here
puts the two back together, so a reader never sees the difference.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel
from sqlalchemy import Connection, Engine

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import RunInfo
from studio.core.models.pass_rule import RuleSql, SettledRule, rule_sql, run_threshold, settle
from studio.core.near_names import did_you_mean

from .errors import NotFound
from .graders import GraderRepository
from .ledger import COSTS, DEFAULTS, OUTCOME, RESULT_COLUMNS, Aggregate, Tally, fold_sql
from .suites import score_range
from .tables import TableRow


class _Runs(Protocol):
    """What this module reads of the library's runs (store/runs.py ``RunRepository``, which imports
    this module: named by what it does, not by its class)."""

    def raw(self, run_id: int) -> TableRow: ...

    def slots(self, run_id: int) -> list[TableRow]: ...

    def get(self, run_id: int) -> RunInfo: ...


class _Library(Protocol):
    """What this module reads of the library (store/library.py ``Library``, which imports this
    module through store/runs.py)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def graders(self) -> GraderRepository: ...

    @property
    def runs(self) -> _Runs: ...

#: a grader's row as ``rows_sql`` gives it: a ``ledger.ResultRow`` without its run
_COLUMNS = RESULT_COLUMNS


class RunGrader(BaseModel):
    slot: int
    key: str
    version: int
    kind: str
    weight: float = 1.0
    #: the score counted as a pass (the suite's threshold for this grader, else the run's)
    threshold: float
    #: the scores the grader's kind can give (None: any finite number)
    score_range: tuple[float, float] | None = None
    #: the grader's own endpoint (a judge's; a run's --endpoint wins), for usage rows naming none
    endpoint: str | None = None
    #: the key its scores are given under (a suite run keeps a plain score under it, ``grader_results``)
    metric: str | None = None


def _run_row(library: _Library, run_id: int) -> TableRow:
    return library.runs.raw(run_id)  # NotFound for an unknown run


@dataclass(frozen=True)
class RunReading:
    """A run as this module reads it once for one answer (``read_run``): its stored row
    (``runs.raw``), the tallies it keeps (``STORED_KEY``: a completed run's, else None), its pass
    threshold, its graders by slot and what each one's tally is counted at: its threshold and its
    columns' suffix in the query (``_columns``), which the pass rule is settled at
    (``pass_rule.settle``) before any query. Why one reading: each answer used to read the run's
    row again for each part of it (three or four times for the sections' tallies)."""

    row: TableRow
    stored: JsonObject | None
    threshold: float
    graders: list[RunGrader]
    counted_at: list[tuple[float, str]]


def _columns(row: TableRow, slots: Sequence[int]) -> list[str]:
    """Each grader's column suffix in a tally's query: a suite run of several graders adds them up
    in one pass, each grader's columns named by its slot (``suite_rows_sql``); any other run, one
    query a grader, over its rows' own columns."""
    return [str(slot) for slot in slots] if _is_suite(row) and len(slots) >= 2 else [""] * len(slots)


def read_run(library: _Library, run_id: int) -> RunReading:
    """Run ``run_id``'s ``RunReading`` (NotFound for an unknown run): its row and its slots read
    once, its threshold settled (``pass_rule.run_threshold``) once they are."""
    row = _run_row(library, run_id)
    slots = library.runs.slots(run_id)
    definitions = [library.graders.version(slot.grader_key, slot.grader_version).definition for slot in slots]
    threshold = _threshold(row)
    graders = [RunGrader(slot=slot.slot, key=slot.grader_key, version=slot.grader_version, kind=definition.kind,
                         weight=slot.weight, threshold=threshold if slot.threshold is None else slot.threshold,
                         score_range=score_range(definition), endpoint=getattr(definition, "endpoint", None),
                         metric=definition.metric.key)
               for slot, definition in zip(slots, definitions, strict=True)]
    return _reading_of(row, graders, threshold)


def read_settled(library: _Library, run_id: int, at: float | None = None) -> tuple[RunReading, SettledRule]:
    """Run ``run_id`` read once (``read_run``) and the pass rule settled for its tallies
    (``pass_rule.settle``) before any of them is counted: each grader's, and the run's own rows'
    at ``at`` (None: the run's threshold)."""
    reading = read_run(library, run_id)
    return reading, settle(reading.counted_at, reading.threshold if at is None else at)


def _reading_of(row: TableRow, graders: Sequence[RunGrader], threshold: float | None = None) -> RunReading:
    """The ``RunReading`` of ``row`` (``runs.raw``) with ``graders`` as the caller gives them
    (``threshold``: the run's, when the caller has just settled it)."""
    columns = _columns(row, [g.slot for g in graders])
    return RunReading(row=row, stored=_stored(row), threshold=_threshold(row) if threshold is None else threshold,
                      graders=list(graders),
                      counted_at=[(g.threshold, c) for g, c in zip(graders, columns, strict=True)])


def _rules(reading: RunReading) -> list[RuleSql]:
    """The rule settled for each grader of ``reading`` alone (``read_settled`` settles the run's
    rows' too)."""
    return [rule_sql(threshold, suffix) for threshold, suffix in reading.counted_at]


def run_graders(library: _Library, run_id: int) -> list[RunGrader]:
    """The graders of run ``run_id`` by slot (one for a run of one grader)."""
    return read_run(library, run_id).graders


def _is_suite(row: TableRow) -> bool:
    return bool(row.suite)


def key_path(key: str) -> str:
    return '$."' + key.replace('"', '') + '"'


def rows_sql(suite: bool) -> str:
    """The per-sample rows of one grader, columns named as ``_COLUMNS``. Numbered parameters: a
    suite run ?1 slot, ?2 JSON path of the key, ?3 run, ?4 dataset; a run of one grader ?1 run."""
    if not suite:
        return "SELECT " + ", ".join(f"r.{c} AS {c}" for c in _COLUMNS) + " FROM results r WHERE r.run_id = ?1"
    sample = {"sample_idx": "r.sample_idx", "sample_id": "r.sample_id", "status": "coalesce(g.status, 'ok')",
              "score": "CASE WHEN g.status IS NULL THEN CAST(json_extract(r.scores, ?2) AS DOUBLE PRECISION)"
                       " ELSE g.score END",
              **{c: f"coalesce(g.{c}, {DEFAULTS[c]!r})" for c in DEFAULTS}}
    return (
        "SELECT " + ", ".join(f"{sample.get(c, 'g.' + c)} AS {c}" for c in _COLUMNS)
        + " FROM results r LEFT JOIN grader_results g ON g.run_id = r.run_id AND g.slot = ?1"
        " AND g.sample_idx = r.sample_idx WHERE r.run_id = ?3"
        " UNION ALL SELECT g.sample_idx, s.sample_id, " + ", ".join(f"g.{c}" for c in OUTCOME)
        + " FROM grader_results g LEFT JOIN samples s ON s.dataset_id = ?4 AND s.idx = g.sample_idx"
        " WHERE g.run_id = ?3 AND g.slot = ?1 AND NOT EXISTS"
        " (SELECT 1 FROM results r2 WHERE r2.run_id = g.run_id AND r2.sample_idx = g.sample_idx)"
    )


def grader_source(run_id: int, suite: bool, slot: int, key: str, dataset_id: int) -> tuple[str, tuple[int | str, ...]]:
    """One grader's rows as an SQL subquery with its numbered parameters (``?1``...): the run's
    ``results`` rows for a run of one grader, the grader's own rows for a suite run."""
    if not suite:
        return rows_sql(False), (run_id,)
    return rows_sql(True), (slot, key_path(key), run_id, dataset_id)


def _params(row: TableRow, slot: int, key: str) -> tuple[object, ...]:
    if not _is_suite(row):
        return (row.id,)
    return (slot, key_path(key), row.id, row.dataset_id)


def _slot_of(library: _Library, run_id: int, key: str) -> tuple[int, str]:
    slots = library.runs.slots(run_id)
    for slot in slots:
        if slot.grader_key == key:
            return slot.slot, key
    raise NotFound(f"run {run_id} has no grader {key!r}{did_you_mean(key, (s.grader_key for s in slots))}")


def _loads(text: str | None) -> JsonValue:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def grader_results(library: _Library, run_id: int, key: str) -> list[JsonObject]:
    """Grader ``key``'s result for each sample of the run, in sample order (the same fields as
    ``runs show --json``, ``grader`` included)."""
    row = _run_row(library, run_id)
    slot, _ = _slot_of(library, run_id, key)
    metric = None
    if _is_suite(row):
        definition = library.graders.version(key, next(s.grader_version for s in library.runs.slots(run_id)
                                                        if s.slot == slot)).definition
        metric = definition.metric.key
    return _results(library, row, slot, key, metric)


def _results(library: _Library, row: TableRow, slot: int, key: str, metric: str | None) -> list[JsonObject]:
    """``grader_results`` of the grader in ``slot`` of the run whose row is ``row``; ``metric``: the
    key a suite run's plain scores are given under (None for a run of one grader)."""
    sql = f"SELECT * FROM ({rows_sql(_is_suite(row))}) AS src ORDER BY sample_idx"
    with library.engine.connect() as conn:
        fetched = conn.exec_driver_sql(sql, _params(row, slot, key)).all()
    out = []
    for values in fetched:
        record = dict(zip(_COLUMNS, values, strict=True))
        record["scores"] = _loads(record["scores"]) or ({metric: record["score"]} if metric and record["status"] == "ok"
                                                        and record["score"] is not None else {})
        record["details"] = _loads(record["details"]) or {}
        record["raw"] = _loads(record["raw"])
        record["cached"] = bool(record["cached"])
        record["grader"] = key
        out.append(record)
    return out


def graders_with_results(library: _Library, run_id: int) -> list[tuple[RunGrader, list[JsonObject]]]:
    """Every grader of the run with its results (what a report of a finished run needs): the run
    and its graders read once (``read_run``), then each one's rows."""
    reading = read_run(library, run_id)
    suite = _is_suite(reading.row)
    return [(g, _results(library, reading.row, g.slot, g.key, g.metric if suite else None)) for g in reading.graders]


_TALLIED = ("status", "score", "details", *COSTS)


def _tally_parts(rule: RuleSql, present: bool = False) -> tuple[str, str]:
    """(each row's columns, the sums over them: ``ledger.fold_sql``) of one tally, over columns
    named ``status{rule.suffix}``... and the rule settled for them (``pass_rule.RuleSql``). Each
    row's decision and scored score are computed once, in a subquery the planner may not fold into
    the sums (the caller's fence); folded, every sum re-evaluated its own copy of them (half the
    query's time, bench/profiles/issue38_summary.txt). ``present``: a row whose status is NULL is
    not this grader's (a suite's one-pass tally) and counts nowhere."""
    suffix = rule.suffix
    status = f"status{suffix}"
    decision = rule.decision
    if present:
        decision = f"CASE WHEN {status} IS NULL THEN NULL ELSE {decision} END"
    d, sc = f"d{suffix}", f"sc{suffix}"
    inner = (f"{status}, {decision} AS {d}, {rule.scored} AS {sc}, "
             + ", ".join(f"{c}{suffix}" for c in COSTS))
    outer = fold_sql({"status": status, "decision": d, "score": sc, **{c: f"{c}{suffix}" for c in COSTS}},
                     present=status if present else None)
    return inner, outer


def tally_sql(rows: str, threshold: float, fence: str = " LIMIT -1") -> str:
    """One SELECT adding up ``rows`` (a subquery with ``_COLUMNS``): counts by status and by the
    pass rule's decision at ``threshold``, the scored results' sums, tokens and time. ``fence``:
    SQLite's ``LIMIT -1``, PostgreSQL's ``OFFSET 0`` (``_tally_parts``)."""
    return _tally_sql(rows, rule_sql(threshold), fence)


def _tally_sql(rows: str, rule: RuleSql, fence: str) -> str:
    """``tally_sql`` with the rule settled (``pass_rule.rule_sql``)."""
    inner, outer = _tally_parts(rule)
    return f"SELECT {outer} FROM (SELECT {inner} FROM ({rows}) AS rows{fence}) AS src"  # PostgreSQL names every subquery


def _fence(conn: Connection) -> str:
    return " LIMIT -1" if conn.dialect.name == "sqlite" else " OFFSET 0"


def _tally_of(values: Sequence[Aggregate]) -> Tally:
    return Tally.of_values(values)


def tally(library: _Library, rows: str, params: tuple[object, ...], threshold: float) -> Tally:
    """``tally_sql`` over ``rows`` with its ``params``."""
    return _tally(library, rows, params, rule_sql(threshold))


def _tally(library: _Library, rows: str, params: tuple[object, ...], rule: RuleSql) -> Tally:
    """``tally`` with the rule settled."""
    with library.engine.connect() as conn:
        values = conn.exec_driver_sql(_tally_sql(rows, rule, _fence(conn)), params).one()
    return _tally_of(values)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def suite_rows_sql(graders: Sequence[RunGrader]) -> str:
    """Every grader's rows of a suite run side by side, one pass: a sample row with each grader's
    columns (``status{slot}``...: what ``rows_sql(True)`` gives that grader), then the grader rows of
    samples without a sample row, each under its own grader's columns (the others NULL). Parameters:
    the run, twice."""
    sample_cols, orphan_cols, joins = [], [], []
    for g in graders:
        k, slot = g.slot, int(g.slot)
        t = f"g{k}"
        sample_cols += [
            f"coalesce({t}.status, 'ok') AS status{k}",
            f"CASE WHEN {t}.status IS NULL THEN CAST(json_extract(r.scores, {_literal(key_path(g.key))})"
            f" AS DOUBLE PRECISION) ELSE {t}.score END AS score{k}",
            f"{t}.details AS details{k}",
            *(f"coalesce({t}.{c}, 0) AS {c}{k}" for c in _TALLIED[3:]),
        ]
        orphan_cols += [f"CASE WHEN g.slot = {slot} THEN g.{c} END AS {c}{k}" for c in _TALLIED]
        joins.append(f" LEFT JOIN grader_results {t} ON {t}.run_id = r.run_id AND {t}.slot = {slot}"
                     f" AND {t}.sample_idx = r.sample_idx")
    return ("SELECT " + ", ".join(sample_cols) + " FROM results r" + "".join(joins) + " WHERE r.run_id = ?"
            " UNION ALL SELECT " + ", ".join(orphan_cols) + " FROM grader_results g WHERE g.run_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM results r2 WHERE r2.run_id = g.run_id AND r2.sample_idx = g.sample_idx)")


def grader_tallies(library: _Library, run_id: int, graders: Sequence[RunGrader]) -> list[Tally]:
    """``grader_tally`` of each of ``graders``: a completed run's stored tallies when each was
    stored at the grader's threshold, else computed (``computed_tallies``)."""
    reading = _reading_of(_run_row(library, run_id), graders)
    return _grader_tallies(library, reading, _rules(reading))


def _grader_tallies(library: _Library, reading: RunReading, rules: Sequence[RuleSql]) -> list[Tally]:
    """``grader_tallies`` of a reading, with the rule settled for each of its graders."""
    if reading.stored is not None:
        entries = _entries(reading.stored)
        found = [_stored_grader(entries, g) for g in reading.graders]
        if all(t is not None for t in found):
            return [t for t in found if t is not None]
    return _computed(library, reading, rules)


def computed_tallies(library: _Library, row: TableRow, graders: Sequence[RunGrader]) -> list[Tally]:
    """Each of ``graders``' tally computed from the run's stored rows (``row``: ``runs.raw``); a
    suite run's in one pass over its rows (one SELECT, each grader's sums side by side) instead of
    a pass a grader."""
    reading = _reading_of(row, graders)
    return _computed(library, reading, _rules(reading))


def _computed(library: _Library, reading: RunReading, rules: Sequence[RuleSql]) -> list[Tally]:
    """``computed_tallies`` of a reading, with the rule settled for each of its graders over the
    columns its query names them by (``RunReading.counted_at``)."""
    row, graders, suite = reading.row, reading.graders, _is_suite(reading.row)
    if not suite or len(graders) < 2:
        return [_tally(library, rows_sql(suite), _params(row, g.slot, g.key), rule)
                for g, rule in zip(graders, rules, strict=True)]
    parts = [_tally_parts(rule, present=True) for rule in rules]
    with library.engine.connect() as conn:
        sql = ("SELECT " + ", ".join(outer for _, outer in parts) + " FROM (SELECT "
               + ", ".join(inner for inner, _ in parts) + f" FROM ({suite_rows_sql(graders)}) AS rows{_fence(conn)}) AS src")
        values = conn.exec_driver_sql(sql, (row.id, row.id)).one()
    width = len(values) // len(graders)
    return [_tally_of(values[n * width:(n + 1) * width]) for n in range(len(graders))]


def grader_tally(library: _Library, run_id: int, grader: RunGrader) -> Tally:
    """One grader's tally at its own threshold (a run of one grader: its ``results`` rows)."""
    return grader_tallies(library, run_id, [grader])[0]


def overall_tally(library: _Library, run_id: int) -> Tally:
    """A suite run's overall score over its sample rows, at the run's threshold (a completed run's
    stored one when it was stored at that threshold)."""
    reading = _reading_of(_run_row(library, run_id), [])
    return _overall_tally(library, reading, rule_sql(reading.threshold))


def _overall_tally(library: _Library, reading: RunReading, rule: RuleSql) -> Tally:
    """``overall_tally`` of a reading, with the rule settled at the run's threshold."""
    entry = None if reading.stored is None else reading.stored.get("overall")
    if isinstance(entry, dict) and entry.get("threshold") == rule.threshold:
        return Tally.model_validate(entry["tally"])
    return _tally(library, rows_sql(False), (reading.row.id,), rule)


@dataclass(frozen=True)
class RunTallies:
    """What the store answers of a run for its sections (engine/sections.py ``load_run``), in one
    reading: the run, where its rows are, its graders by slot with each one's tally at its own
    threshold, and a suite with an overall rule's overall score (its tally at the run's threshold
    and the range it can take); None for any other run."""

    info: RunInfo
    dataset_id: int
    graders: list[RunGrader]
    tallies: list[Tally]
    overall: Tally | None = None
    overall_bounds: tuple[float, float] | None = None


def run_tallies(library: _Library, run_id: int, info: RunInfo | None = None) -> RunTallies:
    """Run ``run_id``'s ``RunTallies`` (NotFound for an unknown run); ``info``: the run as the caller
    just read it (``runs.get`` counts the run's results by status: not worth doing twice). The run
    is read once and the pass rule settled for its tallies before any of them is counted
    (``read_settled``)."""
    if info is None or info.id != run_id:
        info = library.runs.get(run_id)
    reading, settled = read_settled(library, run_id)
    tallies = _grader_tallies(library, reading, settled.graders)
    rule = info.overall_rule  # (a suite's; None for any other run)
    if rule is None:
        return RunTallies(info=info, dataset_id=reading.row.dataset_id, graders=reading.graders, tallies=tallies)
    return RunTallies(info=info, dataset_id=reading.row.dataset_id, graders=reading.graders, tallies=tallies,
                      overall=_overall_tally(library, reading, settled.overall),
                      overall_bounds=overall_bounds(rule, reading.graders))


def overall_bounds(rule: str, graders: Sequence[RunGrader]) -> tuple[float, float] | None:
    """The range a suite's overall score can take, which its interval stays in: 0/1 for all-pass;
    for the weighted mean of graders that all declare a range (and weigh ≥ 0), the hull of their
    ranges; else None (a composite's own rule: its interval still stays in [0, 1] when every overall
    score is 0 or 1, core/intervals.py)."""
    if rule == "all-pass":
        return 0.0, 1.0
    ranges = [g.score_range for g in graders]
    if rule != "mean" or not ranges or any(r is None for r in ranges) or any(g.weight < 0 for g in graders):
        return None
    return min(r[0] for r in ranges if r), max(r[1] for r in ranges if r)


# --- a completed run's tallies, stored once ---------------------------------------------------------
#: the key of ``runs.aggregates`` (JSON) under which a completed run keeps its tallies. Why stored:
#: a run of a million results took 4 s of CPU to add them up on every read (``runs show``, ``runs
#: report``, the window's band), and a completed run's results never change (``runs.claim`` refuses
#: a completed run; only a run being graded writes results). Only a run whose status is "completed"
#: reads them (a stopped, cancelled, failed or interrupted run may be resumed: it computes), and
#: each entry names the threshold it was counted at (a summary asked at another computes). A run's
#: aggregates are rewritten whole at every end, so a resumed run stores fresh tallies at its new
#: completion. ``store/runs.py`` keeps the key out of ``RunInfo.aggregates``: it is no figure.
STORED_KEY = "tally"


def stored_tallies(library: _Library, run_id: int, threshold: float,
                   read: tuple[RunReading, SettledRule] | None = None) -> tuple[Tally, JsonObject]:
    """At a run's end: (the tally of its ``results`` rows at ``threshold``, which its aggregates
    are read from; the ``STORED_KEY`` entry: every grader's tally at its threshold and that one as
    "overall"). Computed once: a run of one grader at its own threshold adds its rows up once.
    ``read``: the run as the caller just read it, the rule settled at ``threshold``
    (``read_settled(library, run_id, threshold)``)."""
    reading, settled = read_settled(library, run_id, threshold) if read is None else read
    graders = reading.graders
    tallies = _computed(library, reading, settled.graders)
    if not _is_suite(reading.row) and len(graders) == 1 and graders[0].threshold == threshold:
        overall = tallies[0]
    else:
        overall = _tally(library, rows_sql(False), (reading.row.id,), settled.overall)
    return overall, stored_form(graders, tallies, overall, threshold)


def stored_form(graders: Sequence[RunGrader], tallies: Sequence[Tally], overall: Tally,
                threshold: float) -> JsonObject:
    """The ``STORED_KEY`` entry of ``graders``' tallies and the ``results`` rows' at ``threshold``
    (computed here, or kept by the run's writer: engine/written_tally.py)."""
    return {"graders": [{"slot": g.slot, "key": g.key, "threshold": g.threshold, "tally": t.model_dump()}
                        for g, t in zip(graders, tallies, strict=True)],
            "overall": {"threshold": threshold, "tally": overall.model_dump()}}


def written_counts(library: _Library, run_id: int) -> tuple[int, int, int, int]:
    """The run's stored rows, counted from their keys' indexes (no row read): ``results`` rows and
    the sum of their sample indices, then ``grader_results``'. What engine/written_tally.py checks
    its tallies against: a row added, removed or written twice changes them."""
    with library.engine.connect() as conn:
        rows, idx = conn.exec_driver_sql(
            "SELECT count(*), sum(sample_idx) FROM results WHERE run_id = ?", (run_id,)).one()
        grader_rows, grader_idx = conn.exec_driver_sql(
            "SELECT count(*), sum(sample_idx) FROM grader_results WHERE run_id = ?", (run_id,)).one()
    return int(rows), int(idx or 0), int(grader_rows), int(grader_idx or 0)


def _stored(row: TableRow) -> JsonObject | None:
    """The run's stored tallies: only a completed run's (any other may still change)."""
    if row.status != "completed":
        return None
    try:
        stored = json.loads(row.aggregates or "{}").get(STORED_KEY)
    except (ValueError, AttributeError):
        return None
    return stored if isinstance(stored, dict) else None


def _stored_grader(entries: dict[tuple[object, object], JsonObject], grader: RunGrader) -> Tally | None:
    entry = entries.get((grader.slot, grader.key))
    if entry is None or entry.get("threshold") != grader.threshold:
        return None
    return Tally.model_validate(entry["tally"])


def _entries(stored: JsonObject | None) -> dict[tuple[object, object], JsonObject]:
    """The stored tallies' entry of each grader by (slot, key): the first whose slot and key equal
    those asked (a hand-edited entry with an unhashable slot or key is nobody's)."""
    found: dict[tuple[object, object], JsonObject] = {}
    for entry in (stored.get("graders") or () if stored is not None else ()):
        if isinstance(entry, dict):
            at = (entry.get("slot"), entry.get("key"))
            if all(isinstance(part, Hashable) for part in at):
                found.setdefault(at, entry)
    return found


def stored_entries(row: TableRow) -> dict[tuple[object, object], JsonObject]:
    """A completed run's stored entry of each grader by (slot, key) (``row``: ``runs.raw``), its
    aggregates read once for them all: its "threshold", "tally" and, stored by the runner with it,
    its "usage" (engine/usage.py); {} for any other run."""
    return _entries(_stored(row))


def _threshold(row: TableRow) -> float:
    """The run's pass threshold (``pass_rule.run_threshold``) from its stored row."""
    return run_threshold(json.loads(row.settings or "{}"), json.loads(row.aggregates or "{}"))
