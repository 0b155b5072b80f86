"""The run repository: runs, their results written as they arrive, and aggregates computed in SQL."""

from __future__ import annotations

import array
import builtins
import json
import math
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeVar, cast

from sqlalchemy import Connection, Engine, Select, func, insert, select, text, update
from sqlalchemy.engine.interfaces import DBAPICursor
from sqlalchemy.pool import PoolProxiedConnection

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import Outcome, RunInfo
from studio.core.models.broken import BrokenRow, BrokenRowError, reason_of
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD
from studio.core.outside import json_text, storable_text

from .authors import current_user
from .database import DriverRow, driver_connection, inserted_id, sqlite_connection, utcnow
from .errors import Conflict, NotFound
from .ledger import AT, DEFAULTS, GRADER_COLUMNS, OUTCOME, RESULT_COLUMNS, SPLITS, Tally
from .panel_stats import panel_aggregates
from .run_graders import STORED_KEY, rows_sql, tally_sql
from .tables import TableRow, datasets, graders, results, run_graders, runs

_INSERT_RESULT = (
    "INSERT OR REPLACE INTO results (run_id, " + ", ".join(RESULT_COLUMNS) + ") VALUES (:run_id, "
    + ", ".join(f":{c}" for c in RESULT_COLUMNS) + ")"
)


_INSERT_GRADER = ("INSERT OR REPLACE INTO grader_results (run_id, slot, sample_idx, " + ", ".join(GRADER_COLUMNS)
                  + ") VALUES (" + ", ".join("?" for _ in range(len(GRADER_COLUMNS) + 3)) + ")")
_INSERT_NEW_GRADER = _INSERT_GRADER.replace("INSERT OR REPLACE", "INSERT OR IGNORE", 1)


_INSERT_RESULT_VALUES = (
    "INSERT OR REPLACE INTO results (run_id, " + ", ".join(RESULT_COLUMNS) + ") VALUES ("
    + ", ".join("?" for _ in range(len(RESULT_COLUMNS) + 1)) + ")"
)
_INSERT_NEW_RESULT_VALUES = _INSERT_RESULT_VALUES.replace("INSERT OR REPLACE", "INSERT", 1) \
    + " ON CONFLICT (run_id, sample_idx) DO NOTHING"

#: a plain scored row (``ok_row``: status ok, no text, no details, no tokens, not cached) bound as
#: its six varying values, the rest the columns' defaults. Why: Python's sqlite3 binds None and
#: bool through its adapter lookup (~0.4 us each, measured on CPython 3.11), and the full row carries four
#: Nones and a bool: a third of a row's whole insert cost, five indexes included (bench/README.md 3)
_PLAIN_COLUMNS = "(run_id, sample_idx, sample_id, status, score, scores, duration_ms) VALUES (?, ?, ?, 'ok', ?, ?, ?)"
_INSERT_PLAIN = "INSERT OR REPLACE INTO results " + _PLAIN_COLUMNS
_INSERT_NEW_PLAIN = "INSERT INTO results " + _PLAIN_COLUMNS + " ON CONFLICT (run_id, sample_idx) DO NOTHING"

#: sqlite3 binds None through its adapter protocol: with no adapter registered for it, each None
#: costs a failed lookup of ``__adapt__`` and ``__conform__`` (~1.6 us, measured on CPython 3.11:
#: a row of four Nones bound whole 9.2 vs 3.6 us with this; bench/profiles/issue38_writes2_insert.txt).
#: An adapter that gives None back (a C call: ``{}.get``) binds the same NULL without the lookups.
#: (Process-wide, as sqlite3's adapters are, and the identity for every connection.)
sqlite3.register_adapter(type(None), cast(Callable[[None], None], {}.get))

#: PostgreSQL has no OR REPLACE / OR IGNORE: whole rows, each replacing (or kept) on its key
def _pg_marks(columns: Sequence[str]) -> str:
    """Placeholders for ``columns``; ``cached`` (a bool from some writers, 0/1 from others) cast to
    the integer PostgreSQL stores (it has no implicit boolean-to-integer conversion)."""
    return ", ".join("CAST(? AS INTEGER)" if c == "cached" else "?" for c in columns)


_PG_RESULT = ("INSERT INTO results (run_id, " + ", ".join(RESULT_COLUMNS) + ") VALUES ("
              + _pg_marks(("run_id", *RESULT_COLUMNS)) + ") ON CONFLICT (run_id, sample_idx) ")
_PG_UPSERT_RESULT = _PG_RESULT + "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in RESULT_COLUMNS[1:])
_PG_NEW_RESULT = _PG_RESULT + "DO NOTHING"
_PG_GRADER = ("INSERT INTO grader_results (run_id, slot, sample_idx, " + ", ".join(GRADER_COLUMNS) + ") VALUES ("
              + _pg_marks(("run_id", "slot", "sample_idx", *GRADER_COLUMNS)) + ") ON CONFLICT (run_id, slot, sample_idx) ")
_PG_UPSERT_GRADER = _PG_GRADER + "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in GRADER_COLUMNS)
_PG_NEW_GRADER = _PG_GRADER + "DO NOTHING"
#: a batch of result rows arrives by COPY in this session's own table (emptied at each commit)
_PG_INCOMING = ("CREATE TEMP TABLE IF NOT EXISTS studio_incoming (n INTEGER, run_id INTEGER, sample_idx INTEGER,"
                " sample_id TEXT, status TEXT, score DOUBLE PRECISION, scores TEXT, rationale TEXT, details TEXT,"
                " error TEXT, raw TEXT, duration_ms DOUBLE PRECISION, prompt_tokens INTEGER,"
                " completion_tokens INTEGER, cached BOOLEAN, cached_tokens INTEGER) ON COMMIT DELETE ROWS")
_PG_COPY = "COPY studio_incoming (n, run_id, " + ", ".join(RESULT_COLUMNS) + ") FROM STDIN"
#: the incoming columns as ``results`` stores them (``cached`` arrives as 0/1 or a bool: COPY reads
#: both into a boolean, stored as 0/1)
_PG_INCOMING_VALUES = ", ".join("cached::int" if c == "cached" else c for c in RESULT_COLUMNS)
_PG_PLAIN_FROM_INCOMING = ("INSERT INTO results (run_id, " + ", ".join(RESULT_COLUMNS) + ") SELECT run_id, "
                           + _PG_INCOMING_VALUES + " FROM studio_incoming")
_PG_FROM_INCOMING = (
    "INSERT INTO results (run_id, " + ", ".join(RESULT_COLUMNS) + ") SELECT run_id, " + _PG_INCOMING_VALUES
    + " FROM (SELECT DISTINCT ON (run_id, sample_idx) * FROM studio_incoming ORDER BY run_id, sample_idx, n DESC)"
    " AS latest ON CONFLICT (run_id, sample_idx) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in RESULT_COLUMNS[1:]))


#: the parts of a row that make it plain (status ok; no rationale, details, error or raw; no tokens,
#: not cached: False == 0), and the six values a plain row is bound as (``_PLAIN_COLUMNS``)
_PLAIN = {"status": "ok", "rationale": None, "details": None, "error": None, "raw": None, "prompt_tokens": 0,
          "completion_tokens": 0, "cached": 0, "cached_tokens": 0}
_PLAIN_PARTS = itemgetter(*(AT[name] for name in _PLAIN))
_PLAIN_ROW = tuple(_PLAIN.values())
_PLAIN_KEY = {_PLAIN_ROW}
_NARROW = itemgetter(*(AT[name] for name in ("run_id", "sample_idx", "sample_id", "score", "scores", "duration_ms")))


def _statements(payload: Sequence[DriverRow], full: str, plain: str) -> list[tuple[str, list[DriverRow]]]:
    """``payload`` as consecutive (statement, rows) runs, in order (a sample written twice in one
    batch keeps its last row): plain scored rows (no rationale, details, error or raw; no tokens,
    not cached) bound narrow (``_PLAIN_COLUMNS``), others whole."""
    if payload and set(map(_PLAIN_PARTS, payload)) == _PLAIN_KEY:  # the usual batch: every row plain,
        return [(plain, list(map(_NARROW, payload)))]  # told and narrowed in C, not a Python step a row
    runs_: list[tuple[str, list[DriverRow]]] = []
    current: list[DriverRow] = []
    narrow = True
    for row in payload:
        if _PLAIN_PARTS(row) == _PLAIN_ROW:  # (False == 0: a cached flag bound as a bool is plain too)
            if not narrow:
                if current:
                    runs_.append((full, current))
                current, narrow = [], True
            current.append(_NARROW(row))
        else:
            if narrow:
                if current:
                    runs_.append((plain, current))
                current, narrow = [], False
            current.append(row)
    if current:
        runs_.append((plain if narrow else full, current))
    return runs_


def _stored_counts(stored: JsonValue) -> dict[str, int] | None:
    """A completed run's results by status from its stored tallies (run_graders ``STORED_KEY``:
    its ``results`` rows' tally, "overall"), None when it has none or they do not add up. A
    completed run's results never change: counting a million of them on every read took a pass
    over its status index. ``RunInfo.aggregates`` never shows the stored tallies: no figure."""
    entry = stored.get("overall") if isinstance(stored, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("tally"), dict):
        return None
    tally = Tally.model_validate(entry["tally"])
    if sum(tally.statuses.values()) != tally.total:
        return None
    return {status: count for status, count in tally.statuses.items() if count}


@dataclass(frozen=True)
class RowFacts:
    """What a run's ``results`` rows add up to (``RunRepository.facts``)."""

    tally: Tally
    #: by status, every status stored (zero counts left out)
    statuses: dict[str, int]
    #: each ``scores`` key: (sum, count) of its values over the scored rows
    metric_sums: dict[str, tuple[float, int]]
    #: ``pairwise`` / ``jury`` entries (panel_stats.py), {} for other runs
    panels: JsonObject


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # one encoder: json.dumps(default=...) builds one a call


def _dumps(value: object) -> str | None:
    """A result's JSON column: None for nothing, else text both backends store alike
    (``outside.json_text``: a grader's or judge's details and payload are outside values)."""
    if value is None or value == {} or value == []:
        return None
    return json_text(value)


def _text(value: str | None) -> str | None:
    """A result's rationale or error: outside text, made storable (``outside.storable_text``)."""
    return None if value is None else storable_text(value)


_SCORE_PREFIX: dict[str, str] = {}


def _dumps_scores(scores: dict[str, float]) -> str | None:
    """Most outcomes carry one finite score under the metric key: write that JSON directly."""
    if len(scores) == 1:
        key, value = next(iter(scores.items()))
        if type(value) is float and math.isfinite(value):
            return scores_prefix(key) + repr(value) + "}"
    if not scores:
        return None
    return _ENCODER.encode(scores)  # the studio's own keys and floats: nothing from outside to check


def scores_prefix(key: str) -> str:
    """``{"key": `` : the start of the scores JSON of a one-score result (``ok_row``)."""
    prefix = _SCORE_PREFIX.get(key)
    if prefix is None:
        prefix = _SCORE_PREFIX.setdefault(key, "{" + json.dumps(key, ensure_ascii=False) + ": ")
    return prefix


#: where a row tuple (``outcome_values``: a ``ledger.ResultRow``'s values) holds the fields the engine reads back
ROW_IDX, ROW_STATUS, ROW_ERROR = AT["sample_idx"], AT["status"], AT["error"]


def ok_row(run_id: int, idx: int, sample_id: str, prefix: str, score: float, duration_ms: float) -> DriverRow:
    """The row ``outcome_values`` gives for ``Outcome.scored(score, {key: score})`` (``prefix`` =
    ``scores_prefix(key)``, ``score`` a finite float), without building the Outcome: the hot path of
    a sandboxed run, where a worker's reply is one float per sample."""
    return (run_id, idx, sample_id, "ok", score, prefix + repr(score) + "}", None, None, None, None,
            duration_ms, 0, 0, 0, 0)


#: -0.0 as the bytes of a C double on this machine (``scored_rows``)
_NEGATIVE_ZERO = array.array("d", [-0.0]).tobytes()


#: what a scorer gave for a sample in ``scored_rows``: a float, or what its ``other`` makes a row of
_Value = TypeVar("_Value")


def scored_rows(run_id: int, keyed: Sequence[DriverRow], values: Sequence[_Value], key: str, duration_ms: float,
                other: Callable[[DriverRow, _Value], DriverRow]) -> list[DriverRow]:
    """The rows of a batch's ``values`` (``keyed``: (idx, sample id, ...) per sample): a finite float
    becomes its ``ok_row`` (every sample sharing ``duration_ms``), anything else ``other(keyed row,
    value)``. A batch's scores are few distinct values (a check's 1.0 and 0.0), so each one's scores
    text is made once a batch, not a ``repr`` and two concatenations a sample (0.45 -> 0.22 us a
    row, bench/profiles/issue38_writes2_run.txt). 0.0 and -0.0 are one key of a dict: zero is in
    that table only when the batch's doubles hold no -0.0, so each keeps its own text."""
    prefix = scores_prefix(key)
    isfinite = math.isfinite
    floats = set(map(type, values)) == {float}  # (a bool equals a float key: told apart first)
    scores = cast("Sequence[float]", values)  # read only when ``floats``: every value's type is float
    distinct = set(scores) if floats else set()  # (an Outcome is not hashable)
    texts = {v: prefix + repr(v) + "}" for v in distinct if v and isfinite(v)}
    if 0.0 in distinct and _NEGATIVE_ZERO not in array.array("d", scores).tobytes():
        texts[0.0] = prefix + "0.0}"  # no -0.0 in the batch (a match at any offset counts: never a miss)
    get = texts.get
    if floats and len(distinct) == len(texts):  # no check a row
        return [(run_id, row[0], row[1], "ok", value, get(value), None, None, None, None, duration_ms, 0, 0, 0, 0)
                for row, value in zip(keyed, scores, strict=True)]
    # (``number``: the value, once its type is float)
    return [(run_id, row[0], row[1], "ok", value, text, None, None, None, None, duration_ms, 0, 0, 0, 0)
            if type(value) is float and ((text := get(number := cast(float, value))) is not None
                                         or (isfinite(number) and (text := prefix + repr(number) + "}")))
            else other(row, value)
            for row, value in zip(keyed, values, strict=True)]


def row_outcome(row: Sequence[object]) -> Outcome:
    """The Outcome a row tuple (``outcome_values``) stands for: for the readers of a run's progress
    events, who get the rows the writer wrote."""
    return grader_row_outcome(row[AT["status"]:])


def outcome_values(run_id: int, idx: int, sample_id: str, outcome: Outcome) -> DriverRow:
    """One result row as a tuple: run_id, then ``RESULT_COLUMNS`` in order (the write hot path;
    ``cached`` as 0/1: sqlite3 binds a bool through its adapter lookup, an int directly)."""
    raw = outcome.raw
    return (
        run_id, idx, sample_id, outcome.status, outcome.score, _dumps_scores(outcome.scores),
        _text(outcome.rationale), _dumps(outcome.details), _text(outcome.error), None if raw is None else _dumps(raw),
        outcome.duration_ms, outcome.prompt_tokens, outcome.completion_tokens, 1 if outcome.cached else 0,
        outcome.cached_tokens,
    )


def grader_values(run_id: int, slot: int, idx: int, outcome: Outcome) -> DriverRow:
    """One per-grader row of a suite run (``grader_results``) as a tuple."""
    raw = outcome.raw
    return (
        run_id, slot, idx, outcome.status, outcome.score, _dumps(outcome.scores), _text(outcome.rationale),
        _dumps(outcome.details), _text(outcome.error), None if raw is None else _dumps(raw), outcome.duration_ms,
        outcome.prompt_tokens, outcome.completion_tokens, 1 if outcome.cached else 0, outcome.cached_tokens,
    )


def grader_row_outcome(row: Sequence[object]) -> Outcome:
    """The Outcome a row's ``ledger.OUTCOME`` columns (a stored ``grader_results`` row from
    ``status`` on) stand for; a stored NULL cost as its column's default."""
    read: dict[str, object] = dict(zip(OUTCOME, row, strict=True))
    for name in ("scores", "details", "raw"):
        # a JSON column is Text: the driver gives a str or None (a writer's row: ``_dumps``' text)
        read[name] = json.loads(cast("str", read[name])) if read[name] else None
    for name, default in DEFAULTS.items():
        if read[name] is None:
            read[name] = default
    return Outcome.model_validate({**read, "scores": read["scores"] or {}, "details": read["details"] or {},
                                   "cached": bool(read["cached"])})


def result_dict(row: TableRow) -> JsonObject:
    """A ``results`` row as a dict, its JSON columns decoded (what ``results`` gives its readers)."""
    data = dict(row._mapping)
    for key in ("scores", "details", "raw"):
        if data.get(key) is not None:
            data[key] = json.loads(data[key])
    data["scores"] = data.get("scores") or {}
    data["details"] = data.get("details") or {}
    data["cached"] = bool(data.get("cached"))
    return data


def _check_runs(raw: sqlite3.Connection, run_ids: set[object]) -> None:
    """The foreign key of ``results.run_id``, checked once per run: SQLite's own error when a run
    does not exist, as the per-row check would have raised."""
    for run_id in run_ids:
        if raw.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
            raise sqlite3.IntegrityError("FOREIGN KEY constraint failed")


#: PostgreSQL advisory locks of class ``_RUN_LOCK``, key the run id: held by the session of the
#: process grading that run (on any machine); the server drops it when that process dies
_RUN_LOCK = 0x72756E73  # "runs"
_RUN_LOCK_HELD = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = CAST(? AS oid)"
                  " AND objid = CAST(? AS oid) AND objsubid = 2 AND granted"
                  " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


class RunRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        #: run id -> the pooled connection holding that run's advisory lock (PostgreSQL)
        self._run_locks: dict[int, PoolProxiedConnection] = {}

    def _hold_run_lock(self, run_id: int) -> bool:
        """Take the run's advisory lock for as long as this process grades it (False: another
        process, here or on another machine, holds it)."""
        if run_id in self._run_locks:
            return True
        fairy = self._engine.raw_connection()
        cursor = fairy.cursor()
        cursor.execute("SELECT pg_try_advisory_lock(CAST(? AS INTEGER), CAST(? AS INTEGER))", (_RUN_LOCK, run_id))
        row = cursor.fetchone()  # the function's one row
        held = row is not None and bool(row[0])
        fairy.commit()
        if not held:
            fairy.close()
            return False
        self._run_locks[run_id] = fairy
        return True

    def _release_run_lock(self, run_id: int) -> None:
        fairy = self._run_locks.pop(run_id, None)
        if fairy is None:
            return
        try:
            cursor = fairy.cursor()
            cursor.execute("SELECT pg_advisory_unlock(CAST(? AS INTEGER), CAST(? AS INTEGER))", (_RUN_LOCK, run_id))
            fairy.commit()
        finally:
            fairy.close()

    def create(self, grader_id: int, grader_version: int, dataset_id: int, total: int,
               endpoint: str | None = None, settings: JsonObject | None = None, *,
               slots: Sequence[Mapping[str, object]] | None = None, suite: JsonObject | None = None) -> RunInfo:
        """A run of one grader, or (``slots``: one dict per grader with ``grader_id``, ``grader_key``,
        ``grader_version``, ``weight``, ``threshold``; ``suite``: its key, version and overall rule)
        of several; ``grader_id``/``grader_version`` then name the first."""
        with self._engine.begin() as conn:
            run_id = inserted_id(conn.execute(insert(runs).values(
                grader_id=grader_id, grader_version=grader_version, dataset_id=dataset_id,
                status="pending", endpoint=endpoint, total=total,
                settings=json.dumps(settings or {}), aggregates="{}", created_at=utcnow(),
                suite=None if suite is None else json.dumps(suite), author=current_user(),
            )))
            if slots is None:
                key = conn.execute(select(graders.c.key).where(graders.c.id == grader_id)).scalar_one()
                slots = [{"grader_id": grader_id, "grader_key": key, "grader_version": grader_version}]
            conn.execute(insert(run_graders), [{"weight": 1.0, "threshold": None, **slot, "run_id": run_id,
                                                "slot": n} for n, slot in enumerate(slots)])
        return self.get(run_id)

    def write_results(self, run_id: int, rows: Sequence[tuple[int, str, Outcome]]) -> None:
        """One transaction per batch: what is written survives a kill; a re-graded sample is replaced."""
        if not rows:
            return
        payload = [outcome_values(run_id, idx, sid, outcome) for idx, sid, outcome in rows]
        self.write_rows(payload)

    def write_rows(self, payload: Sequence[DriverRow], grader_rows: Sequence[DriverRow] = ()) -> None:
        """Result rows already in ``outcome_values`` form (and a suite's per-grader rows in
        ``grader_values`` form), one transaction: the hot path of every run, so the driver's own
        connection and executemany, without the SQL layer's per-call work."""
        if not payload and not grader_rows:
            return
        if self._engine.dialect.name != "sqlite":
            self._write_server_rows(payload, grader_rows)
            return
        fairy = self._engine.raw_connection()
        try:
            raw = sqlite_connection(fairy)  # autocommit off (we BEGIN ourselves)
            # SQLite checks the run_id foreign key once per row, and with OR REPLACE that check costs
            # half as much again as the insert itself (13.3 vs 8.6 us a row, measured): the rows of
            # one write name a handful of runs, so those are checked once, inside the transaction,
            # with the per-row check off (a connection setting, only changeable outside one)
            raw.execute("PRAGMA foreign_keys=OFF")
            try:
                raw.execute("BEGIN IMMEDIATE")  # the write lock first: a read that then writes can meet SQLITE_BUSY_SNAPSHOT
                try:
                    _check_runs(raw, {row[0] for row in payload} | {row[0] for row in grader_rows})
                    if grader_rows:
                        raw.executemany(_INSERT_GRADER, grader_rows)
                    for statement, rows in _statements(payload, _INSERT_RESULT_VALUES, _INSERT_PLAIN):
                        raw.executemany(statement, rows)
                except BaseException:
                    raw.execute("ROLLBACK")
                    raise
                raw.execute("COMMIT")
            finally:
                raw.execute("PRAGMA foreign_keys=ON")
        finally:
            fairy.close()

    def _write_server_rows(self, payload: Sequence[DriverRow], grader_rows: Sequence[DriverRow]) -> None:
        """``write_rows`` on PostgreSQL: one transaction; the result rows go through COPY into a
        session-private table and from there into ``results`` in one statement (a row per round
        trip would cost four times the whole SQLite write, bench/README.md 6); a sample written
        twice in one batch keeps its last row, as on SQLite."""
        # (text and JSON were made storable by ``outcome_values``: a NUL no longer reaches here)
        fairy = self._engine.raw_connection()
        try:
            cursor = fairy.cursor()
            try:
                if grader_rows:
                    cursor.executemany(_PG_UPSERT_GRADER, grader_rows)
                if payload:
                    cursor.execute(_PG_INCOMING)
                    with cursor.copy(_PG_COPY) as copy:
                        for n, row in enumerate(payload):
                            copy.write_row((n, *row))
                    self._from_incoming(cursor, payload)
            except BaseException:
                fairy.rollback()
                raise
            fairy.commit()
        finally:
            fairy.close()

    @staticmethod
    def _from_incoming(cursor: DBAPICursor, payload: Sequence[DriverRow]) -> None:
        """The COPY'd rows into ``results``: a plain INSERT first (the usual batch: new samples,
        each once), else, or when a sample is stored already (a re-graded one), the upsert that
        keeps each sample's last row (a third slower on 100k rows, measured)."""
        from psycopg.errors import UniqueViolation

        if len({(row[0], row[1]) for row in payload}) == len(payload):
            cursor.execute("SAVEPOINT studio_fresh")
            try:
                cursor.execute(_PG_PLAIN_FROM_INCOMING)
            except UniqueViolation:
                cursor.execute("ROLLBACK TO SAVEPOINT studio_fresh")
            else:
                cursor.execute("RELEASE SAVEPOINT studio_fresh")
                return
        cursor.execute(_PG_FROM_INCOMING)

    def slots(self, run_id: int) -> list[TableRow]:
        """The graders of a run by slot (``run_graders`` rows: slot, grader_id, grader_key,
        grader_version, weight, threshold)."""
        with self._engine.connect() as conn:
            return list(conn.execute(select(run_graders).where(run_graders.c.run_id == run_id)
                                     .order_by(run_graders.c.slot)))

    def partial(self, run_id: int) -> dict[int, dict[int, Outcome]]:
        """A suite run's samples some graders finished and others not (a kill, a cancel): sample
        index -> {slot: Outcome}, so a resume grades only the missing graders and nothing twice."""
        return self._grader_outcomes(
            {}, run_id, "WHERE g.run_id = ? AND NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = g.run_id"
            " AND r.sample_idx = g.sample_idx)")

    def errored(self, run_id: int) -> dict[int, dict[int, Outcome]]:
        """The samples whose result is an error (``run --resume --retry-errors`` grades them again):
        sample index -> {slot: Outcome} of a suite's graders that did not err on it (kept, not asked
        again); a run of one grader has none."""
        with self._engine.connect() as conn:
            out: dict[int, dict[int, Outcome]] = {idx: {} for idx in conn.execute(select(results.c.sample_idx).where(
                results.c.run_id == run_id, results.c.status == "error")).scalars()}
        if not out:
            return out
        return self._grader_outcomes(
            out, run_id, "JOIN results r ON r.run_id = g.run_id AND r.sample_idx = g.sample_idx"
            " WHERE g.run_id = ? AND r.status = 'error' AND g.status <> 'error'")

    def grader_outcomes(self, run_id: int) -> dict[int, dict[int, Outcome]]:
        """Every grader's outcome of a suite run: sample index -> {slot: Outcome} (``runs
        compare-external`` lays them beside another platform's results)."""
        return self._grader_outcomes({}, run_id, "WHERE g.run_id = ?")

    def _grader_outcomes(self, out: dict[int, dict[int, Outcome]], run_id: int,
                         where: str) -> dict[int, dict[int, Outcome]]:
        """``out`` with the Outcome of each ``grader_results`` row ``where`` selects (alias g), by
        sample index and slot."""
        with self._engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT g.sample_idx, g.slot, g." + ", g.".join(GRADER_COLUMNS)
                                        + " FROM grader_results g " + where, (run_id,)).all()
        for row in rows:
            out.setdefault(row[0], {})[row[1]] = grader_row_outcome(row[2:])
        return out

    def refused_errors(self, run_id: int) -> int:
        """How many of the run's results are errors from a refused key or proxy credentials (HTTP
        401, 403 or 407, as the judge client words them, before and since such a refusal stopped
        runs instead): those samples were never graded, so a resume does not call the run complete
        while it holds them (``run --resume --retry-errors`` grades them)."""
        error = results.c.error
        with self._engine.connect() as conn:
            return int(conn.execute(select(func.count()).where(
                results.c.run_id == run_id, results.c.status == "error",
                error.like("%HTTP 401%") | error.like("%HTTP 403%") | error.like("%HTTP 407%"))).scalar_one())

    def done_indices(self, run_id: int) -> set[int]:
        with self._engine.connect() as conn:
            return set(conn.execute(select(results.c.sample_idx).where(results.c.run_id == run_id)).scalars())

    def set_status(self, run_id: int, status: str, *, aggregates: JsonObject | None = None,
                   error: str | None = None, only_from: tuple[str, ...] | None = None) -> bool:
        """Store the run's status (and aggregates, error); ``only_from``: only when its stored status
        is one of these, in the same statement (a run that completed meanwhile is never marked
        cancelled). False when the guard left the run as it was."""
        values: dict[str, object] = {"status": status, "error": error}
        if aggregates is not None:
            values["aggregates"] = json.dumps(aggregates)
        values["finished_at"] = utcnow() if status in ("completed", "cancelled", "failed", "stopped") else None
        values["owner_pid"] = os.getpid() if status == "running" else None
        statement = update(runs).where(runs.c.id == run_id)
        if only_from is not None:
            statement = statement.where(runs.c.status.in_(only_from))
        with self._engine.begin() as conn:
            changed = conn.execute(statement.values(**values)).rowcount > 0
        if status != "running":
            self._release_run_lock(run_id)
        return changed or only_from is None

    def claim(self, run_id: int, reopen: bool = False) -> None:
        """Mark the run as being graded by this process; refuse one another live process grades
        (on PostgreSQL, a process on any machine: the run's advisory lock, not a process id), and a
        completed one unless ``reopen`` (its errors are graded again)."""
        server = self._engine.dialect.name != "sqlite"
        with self._engine.begin() as conn:
            row = conn.execute(select(runs.c.status, runs.c.owner_pid).where(runs.c.id == run_id)).first()
            if row is None:
                raise NotFound(f"no run with id {run_id}")
            if row.status == "completed" and not reopen:
                raise Conflict(f"run {run_id} is already complete")
            if server and not self._hold_run_lock(run_id):
                raise Conflict(f"run {run_id} is being graded by another process (on this machine or another); "
                               "cancel it there first")
            if not server and row.status == "running" and row.owner_pid not in (None, os.getpid()) \
                    and pid_alive(row.owner_pid):
                raise Conflict(f"run {run_id} is being graded by process {row.owner_pid}; cancel it there first")
            conn.execute(update(runs).where(runs.c.id == run_id).values(
                status="running", owner_pid=os.getpid(), finished_at=None, error=None))

    def _select(self) -> Select[*tuple[object, ...]]:
        return (
            select(runs, graders.c.key.label("grader_key"), datasets.c.name.label("dataset"))
            .join(graders, graders.c.id == runs.c.grader_id)
            .join(datasets, datasets.c.id == runs.c.dataset_id)
        )

    def _info(self, conn: Connection, row: TableRow) -> RunInfo:
        """A run's stored row validated on read; a ``BrokenRowError`` naming it when it does not
        validate (a teammate's or a hand edit's settings or aggregates that are not JSON, a status
        this studio does not know)."""
        try:
            return self._parsed_info(conn, row)
        except (ValueError, TypeError, AttributeError) as exc:  # pydantic's ValidationError is a ValueError
            raise BrokenRowError(BrokenRow(
                "run", str(row.id), str(getattr(row, "author", "") or ""), reason_of(exc),
                "its results are kept; grade again with a new run, and ask the library's owner to repair"
                f" or delete run {row.id}'s row (docs/team.md)")) from None

    def _parsed_info(self, conn: Connection, row: TableRow) -> RunInfo:
        aggregates = json.loads(row.aggregates or "{}")
        stored = aggregates.pop(STORED_KEY, None)
        counts = _stored_counts(stored) if row.status == "completed" else None
        if counts is None:  # a run that may still change (or one stored before tallies were kept)
            counts = dict(conn.execute(
                select(results.c.status, func.count()).where(results.c.run_id == row.id).group_by(results.c.status)
            ).all())
        status = row.status
        if status == "running" and not self._being_graded(conn, row):
            status = "interrupted"  # its process died (killed, crashed): resume finishes it
        return RunInfo(
            id=row.id, grader_key=row.grader_key, grader_version=row.grader_version, dataset=row.dataset,
            status=status, endpoint=row.endpoint, total=row.total, done=sum(counts.values()),
            counts=counts, aggregates=aggregates,
            settings=json.loads(row.settings or "{}"), created_at=row.created_at, finished_at=row.finished_at,
            suite=json.loads(row.suite) if row.suite else None,
        )

    def _being_graded(self, conn: Connection, row: TableRow) -> bool:
        if conn.dialect.name == "sqlite":
            return row.owner_pid is not None and pid_alive(row.owner_pid)
        if row.id in self._run_locks:
            return True
        return bool(conn.exec_driver_sql(_RUN_LOCK_HELD, (_RUN_LOCK, row.id)).scalar())

    def get(self, run_id: int) -> RunInfo:
        with self._engine.connect() as conn:
            row = conn.execute(self._select().where(runs.c.id == run_id)).first()
            if row is None:
                raise NotFound(f"no run with id {run_id}")
            return self._info(conn, row)

    def raw(self, run_id: int) -> TableRow:
        with self._engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).first()
        if row is None:
            raise NotFound(f"no run with id {run_id}")
        return row

    def list(self, *, grader_key: str | None = None, limit: int = 200) -> list[RunInfo]:
        """The latest runs (of ``grader_key`` alone: a suite run is listed without a grader filter)
        whose stored rows validate."""
        return [entry for entry in self.listing(grader_key=grader_key, limit=limit) if isinstance(entry, RunInfo)]

    def listing(self, *, grader_key: str | None = None, limit: int = 200) -> builtins.list[RunInfo | BrokenRow]:
        """``list`` with each run whose stored row does not validate as a ``BrokenRow`` naming it."""
        query = self._select().order_by(runs.c.id.desc()).limit(limit)
        if grader_key:
            query = query.where(graders.c.key == grader_key, runs.c.suite.is_(None))
        out: builtins.list[RunInfo | BrokenRow] = []
        with self._engine.connect() as conn:
            for row in conn.execute(query).all():
                try:
                    out.append(self._info(conn, row))
                except BrokenRowError as exc:
                    out.append(exc.row)
        return out

    def results(self, run_id: int, *, failed_only: bool = False, offset: int = 0,
                limit: int | None = None) -> builtins.list[JsonObject]:
        query = select(results).where(results.c.run_id == run_id).order_by(results.c.sample_idx)
        if failed_only:
            query = query.where(results.c.status.in_(("error", "invalid")))
        query = query.offset(offset)
        if limit is not None:
            query = query.limit(limit)
        with self._engine.connect() as conn:
            return [result_dict(row) for row in conn.execute(query)]

    def facts(self, run_id: int, pass_threshold: float = DEFAULT_PASS_THRESHOLD, tally: Tally | None = None,
              metric_sums: dict[str, tuple[float, int]] | None = None,
              panels: JsonObject | None = None, keys: builtins.list[str] | None = None) -> RowFacts:
        """What the run's ``results`` rows add up to, as the store answers it: their tally at
        ``pass_threshold`` (ledger.py's folds in SQL, unless ``tally`` is given: kept by the run's
        writer, engine/written_tally.py), the counts by status (every status stored, a status the
        ledger does not know included), each ``scores`` key's sum and count over the scored rows,
        and the panels (pairwise judges, juries). The figures read from them (mean, pass rate...)
        are engine/summary.py's ``run_aggregates``: no formula here. ``keys``: a suite run's grader
        keys ([] for a run of one grader) as the caller just read them (None: read them)."""
        with self._engine.connect() as conn:
            if tally is None:
                fence = " LIMIT -1" if conn.dialect.name == "sqlite" else " OFFSET 0"
                tally = Tally.of_values(conn.exec_driver_sql(
                    tally_sql(rows_sql(False), pass_threshold, fence), (run_id,)).one())
            statuses = {k: v for k, v in tally.statuses.items() if v}
            if sum(tally.statuses.values()) != tally.total:  # a status the ledger does not count
                statuses = dict(conn.execute(select(results.c.status, func.count()).where(
                    results.c.run_id == run_id).group_by(results.c.status)).all())
            if metric_sums is None:
                metric_sums = self._metric_sums(conn, run_id, keys)
            if panels is None:
                panels = panel_aggregates(conn, run_id)  # pairwise judges and juries only
        return RowFacts(tally=tally, statuses=statuses, metric_sums=metric_sums, panels=panels)

    @staticmethod
    def _metric_sums(conn: Connection, run_id: int, keys: builtins.list[str] | None) -> dict[str, tuple[float, int]]:
        """Each key of the scored results' ``scores``: (sum, count) of its values. A suite run's
        keys are its graders' (plan.sample_rows writes no other): one json_extract a key, a quarter
        of the time of splitting every row with json_each and grouping
        (bench/profiles/issue38_summary.txt)."""
        where = "WHERE results.run_id = :r AND results.scores IS NOT NULL AND results.status IN ('ok','invalid')"
        if keys is None:
            suite = conn.execute(select(runs.c.suite).where(runs.c.id == run_id)).scalar()
            keys = sorted(conn.execute(select(run_graders.c.grader_key).where(run_graders.c.run_id == run_id))
                          .scalars()) if suite else []
        # each sum in the ledger's two parts (a teammate's 1e308s fail PostgreSQL's plain float sum)
        split = SPLITS["sum"]

        def sums(value: str) -> str:
            return f"{split.sql(value, False)}, {split.sql(value, True)}, count({value})"

        def total(low: float | None, high: float | None) -> float:
            return split.whole(float(low or 0.0), float(high or 0.0))

        if not keys or any('"' in key for key in keys):
            found = conn.execute(text(
                f"SELECT j.key, {sums('CAST(j.value AS DOUBLE PRECISION)')}"
                " FROM results, json_each(results.scores) AS j " + where + " GROUP BY j.key"), {"r": run_id}).all()
            return {key: (total(low, high), int(n)) for key, low, high, n in found if n}
        value = "CAST(json_extract(results.scores, :k{n}) AS DOUBLE PRECISION)"
        parts = ", ".join(sums(value.format(n=n)) for n in range(len(keys)))
        row = conn.execute(text(f"SELECT {parts} FROM results {where}"),
                           {"r": run_id, **{f"k{n}": f'$."{key}"' for n, key in enumerate(keys)}}).one()
        return {key: (total(row[3 * n], row[3 * n + 1]), int(row[3 * n + 2]))
                for n, key in enumerate(keys) if row[3 * n + 2]}

    # -- for executors that grade off this process (engine/executors): exactly once, settings ---------------
    def insert_new_rows(self, payload: Sequence[DriverRow], grader_rows: Sequence[DriverRow] = ()) -> int:
        """``insert_new_results`` for rows already in ``outcome_values`` / ``grader_values`` form:
        a row whose key is stored is left as it is; returns how many sample rows were written."""
        if not payload and not grader_rows:
            return 0
        if self._engine.dialect.name != "sqlite":
            with self._engine.begin() as conn:
                if grader_rows:
                    conn.exec_driver_sql(_PG_NEW_GRADER, list(grader_rows))
                if not payload:
                    return 0
                # one row at a time: rowcount says whether that row was new (0 when its key was stored)
                cursor = driver_connection(conn.connection).cursor()
                written = 0
                for row in payload:
                    cursor.execute(_PG_NEW_RESULT, row)
                    written += cursor.rowcount
            return written
        with self._engine.begin() as conn:
            if grader_rows:
                conn.exec_driver_sql(_INSERT_NEW_GRADER, list(grader_rows))
            if not payload:
                return 0
            before = conn.exec_driver_sql("SELECT total_changes()").scalar_one()
            for statement, rows in _statements(payload, _INSERT_NEW_RESULT_VALUES, _INSERT_NEW_PLAIN):
                conn.exec_driver_sql(statement, rows)
            after = conn.exec_driver_sql("SELECT total_changes()").scalar_one()
        return int(after - before)

    def insert_new_results(self, run_id: int, rows: Sequence[tuple[int, str, Outcome]]) -> int:
        """Write results whose sample has none yet; returns how many were written.

        The idempotent twin of ``write_results``: a sample already stored under (run, sample index),
        the results table's unique key, is left as it is, so a block graded twice (a node lost after
        it answered) can never write a sample twice. The caller reports ``len(rows) - written``.
        """
        return self.insert_new_rows([outcome_values(run_id, idx, sid, outcome) for idx, sid, outcome in rows])

    def update_settings(self, run_id: int, changes: JsonObject) -> RunInfo:
        """Merge ``changes`` into a run's stored settings (``run --resume --executor ray`` moves a
        run to a cluster, and later resumes stay there)."""
        with self._engine.begin() as conn:
            row = conn.execute(select(runs.c.settings).where(runs.c.id == run_id)).first()
            if row is None:
                raise NotFound(f"no run with id {run_id}")
            settings = {**json.loads(row.settings or "{}"), **changes}
            settings = {k: v for k, v in settings.items() if v is not None}
            conn.execute(update(runs).where(runs.c.id == run_id).values(settings=json.dumps(settings)))
        return self.get(run_id)

