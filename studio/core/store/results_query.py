"""The SQL behind the results grid and exports: which result ids match a filter, in what order, their rows.

No Qt here: the window's grid and the streaming exports (``studio.core.store.reports``) share it.
The grid holds only the ordered ids (an ``array('q')``: 8 MB for a million, parsed into it a slice
at a time, never a list of a million ints) and asks for rows a page at a time; every sort and filter is a ``WHERE``/``ORDER BY`` that SQLite answers,
from the ``(run_id, sample_idx)``, ``(run_id, score)`` and ``(run_id, status)`` indexes where it can.
Ids are read through the raw sqlite3 cursor: a million SQLAlchemy ``Row`` objects would cost more
than the query itself.
"""

from __future__ import annotations

import json
import math
import re
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the library imports every repository
    from .library import Library

from sqlalchemy import Engine

from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.models import RunInfo
from studio.core.models.pass_rule import (
    DEFAULT_PASS_THRESHOLD,
    LARGEST,
    NOT_PASSED,
    decide,
    decision_in_sql,
    decision_sql_text,
    verdict_in,
    word,
)
from studio.core.store.database import driver_connection

#: sort keys of the grid's columns and the SQL expression each sorts by
SORT_SQL: dict[str, str] = {
    "idx": "r.sample_idx",
    "sample_id": "r.sample_id",
    "input": "s.input_text",
    "completion": "s.completion",
    "expected": "s.expected",
    "score": "r.score",
    "status": "r.status",
    "error": "r.error",
    "latency": "r.duration_ms",
    "tokens": "(r.prompt_tokens + r.completion_tokens)",
    "cached": "r.cached",
}
#: keys whose order SQLite reads straight off an index (no temporary sort of the whole run)
INDEXED_SORTS = frozenset({"idx", "score", "status", "latency", "sample_id"})  # migration 2 indexes the last two

FAILED = ("error", "invalid")
#: the sort key of a suite run's grader column is ``grader:<key>``
GRADER_SORT = "grader:"
SLUG = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,127}$")


def grader_path(key: str) -> str:
    """The JSON path of grader ``key``'s score in a suite run's ``scores`` (keys hold dots)."""
    return '$."' + key.replace('"', "") + '"'

CELL_CHARS = 600  # characters of a long text fetched for a cell and its tooltip; the pane shows all


@dataclass(frozen=True)
class ResultFilter:
    """What the analyst narrowed the grid to; the empty filter shows the whole run."""

    statuses: tuple[str, ...] = ()
    min_score: float | None = None
    max_score: float | None = None
    text: str = ""
    #: "" (all), "unlabelled" or "disagreements" (human PASS/FAIL label versus the judge's verdict)
    labels: str = ""
    label_set_id: int | None = None
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    #: the runs of a ``run --repeat`` group: with ``labels="unstable"``, samples graded differently
    repeat_runs: tuple[int, ...] = ()
    #: a suite run's per-grader conditions: (grader key, "pass" | "fail", threshold), all must hold
    #: ("the judge says fail but exact match passes" is two of them)
    graders: tuple[tuple[str, str, float], ...] = ()
    #: only results that did not pass: errors, invalid answers, and scores below ``pass_threshold``
    #: (a judge's own FAIL verdict counts, whatever its score)
    failing: bool = False

    @property
    def empty(self) -> bool:
        return not (self.failing or self.statuses or self.min_score is not None or self.max_score is not None
                    or self.text.strip() or (self.labels and self.label_set_id is not None)
                    or (self.labels == "unstable" and bool(self.repeat_runs)) or bool(self.graders))


def current_label_sql(label_set_id: int, column: str) -> str:
    """A correlated subquery: ``column`` of the newest label version of ``r``'s sample."""
    return (f"(SELECT {column} FROM labels l WHERE l.label_set_id = {int(label_set_id)} "
            f"AND l.sample_id = r.sample_id ORDER BY l.version DESC LIMIT 1)")


LABEL_TEXT = "coalesce(l.verdict, printf('%g', l.score), '')"


#: the result columns the pass rule reads, in the grid's SQL
_RESULT_COLUMNS = {"status": "r.status", "score": "r.score", "details": "r.details"}


def failing_sql(threshold: float) -> str:
    """A result that did not pass by the pass rule (``models/pass_rule``): an error, an invalid
    answer, a judge's FAIL, or a score under ``threshold`` (an NA is not a failure)."""
    return decision_in_sql(NOT_PASSED, **_RESULT_COLUMNS, threshold=threshold)


def outcome_word(status: str, score: float | None, details: object, threshold: float) -> str:
    """What a reviewer reads first (``pass_rule.word`` of the pass rule's decision): PASS or FAIL
    for a graded result, NA for an ok result without a score, else the status."""
    return word(status, decide(status, score, verdict_in(details), threshold))


def judge_verdict_sql(threshold: float) -> str:
    """The judge's PASS or FAIL by the pass rule, in capitals as human labels are (NULL otherwise)."""
    decision = decision_sql_text(**_RESULT_COLUMNS, threshold=threshold)
    return f"(CASE {decision} WHEN 'pass' THEN 'PASS' WHEN 'fail' THEN 'FAIL' END)"


def grader_decision_sql(run_id: int, threshold: float) -> str:
    """A suite run's grader's decision on the row ``r`` by the pass rule (two ``?`` parameters: the
    key's JSON path in ``scores``, then the key): its own ``grader_results`` row when it has one,
    else the plain score kept in the sample row's ``scores``. The grader's slot is looked up once
    (the run id is a literal, so SQLite does not correlate that lookup with every row)."""
    decision = decision_sql_text("x.status", "x.score", "x.details", threshold)
    return (f"(SELECT {decision} FROM (SELECT coalesce(g.status, 'ok') AS status, CASE WHEN g.status IS NULL"
            # CAST and the subquery's alias: PostgreSQL's json_extract gives text and it names every subquery
            " THEN CAST(json_extract(r.scores, ?) AS DOUBLE PRECISION) ELSE g.score END AS score,"
            " g.details AS details FROM (SELECT 1) AS one"
            f" LEFT JOIN grader_results g ON g.run_id = {int(run_id)} AND g.sample_idx = r.sample_idx AND g.slot ="
            f" (SELECT slot FROM run_graders WHERE run_id = {int(run_id)} AND grader_key = ?)) x)")


@dataclass(frozen=True)
class ResultQuery:
    run_id: int
    dataset_id: int
    filter: ResultFilter = field(default_factory=ResultFilter)
    sort_key: str = "idx"
    descending: bool = False

    def with_sort(self, key: str, descending: bool) -> ResultQuery:
        return replace(self, sort_key=key, descending=descending)

    def with_filter(self, flt: ResultFilter) -> ResultQuery:
        return replace(self, filter=flt)

    def _where(self) -> tuple[str, JsonArray, bool]:
        clauses = ["r.run_id = ?"]
        params: JsonArray = [self.run_id]
        needs_samples = self.sort_key in ("input", "completion", "expected")
        flt = self.filter
        if flt.statuses:
            clauses.append(f"r.status IN ({','.join('?' * len(flt.statuses))})")
            params.extend(flt.statuses)
        if flt.failing:
            clauses.append(failing_sql(flt.pass_threshold))
        if flt.min_score is not None:
            clauses.append("r.score >= ?")
            params.append(flt.min_score)
        if flt.max_score is not None:
            clauses.append("r.score <= ?")
            params.append(flt.max_score)
        if flt.labels == "unstable":
            runs = ",".join(str(int(r)) for r in flt.repeat_runs) or "-1"
            clauses.append(f"r.sample_id IN (SELECT sample_id FROM results WHERE run_id IN ({runs}) "
                           "GROUP BY sample_id HAVING count(DISTINCT status || ':' || coalesce(score, '')) > 1)")
        elif flt.labels and flt.label_set_id is not None:
            label = current_label_sql(flt.label_set_id, LABEL_TEXT)
            if flt.labels == "unlabelled":
                clauses.append(f"coalesce({label}, '') = ''")
            else:
                verdict = current_label_sql(flt.label_set_id, "l.verdict")
                clauses.append(f"r.status = 'ok' AND coalesce({verdict}, '') IN ('PASS', 'FAIL') "
                               f"AND {verdict} <> {judge_verdict_sql(flt.pass_threshold)}")
        for key, verdict, threshold in flt.graders:  # "pass" / "fail" by the pass rule on that grader's result
            clauses.append(grader_decision_sql(self.run_id, threshold) + (" = 'pass'" if verdict == "pass" else " = 'fail'"))
            params.extend([grader_path(key), key])
        text = flt.text.strip()
        if text:
            needs_samples = True
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            columns = ("r.sample_id", "s.input_text", "s.completion", "s.expected", "r.error", "r.rationale")
            clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns) + ")")
            params.extend([pattern] * len(columns))
        return " AND ".join(clauses), params, needs_samples

    def from_clause(self, needs_samples: bool) -> tuple[str, JsonArray]:
        if not needs_samples:
            return "results r", []
        return "results r LEFT JOIN samples s ON s.dataset_id = ? AND s.idx = r.sample_idx", [self.dataset_id]

    def order_clause(self) -> str:
        direction = "DESC" if self.descending else "ASC"
        if self.sort_key.startswith(GRADER_SORT) and SLUG.match(self.sort_key[len(GRADER_SORT):]):
            # a suite run's grader column: its score under the row's ``scores`` (no index: a sort of
            # the run's rows in SQLite, as for input or tokens)
            # (CAST: a number on PostgreSQL too, whose json_extract gives text)
            expr = f"CAST(json_extract(r.scores, '{grader_path(self.sort_key[len(GRADER_SORT):])}') AS DOUBLE PRECISION)"
            return f"{expr} {direction}, r.sample_idx {direction}"
        expr = SORT_SQL.get(self.sort_key, SORT_SQL["idx"])
        if self.sort_key == "idx":
            return f"r.sample_idx {direction}"
        # ties in sample order where the sort's index holds the sample index (the score's, revision
        # 0003), else in row order, which an index holds as its last column: no sort of the ties
        tie = "r.sample_idx" if self.sort_key not in INDEXED_SORTS or self.sort_key == "score" else "r.id"
        return f"{expr} {direction}, {tie} {direction}"

    def select(self, columns: str) -> tuple[str, JsonArray]:
        """``SELECT columns`` of the matching results in grid order."""
        where, params, needs_samples = self._where()
        source, source_params = self.from_clause(needs_samples)
        return f"SELECT {columns} FROM {source} WHERE {where} ORDER BY {self.order_clause()}", source_params + params


@dataclass
class IdSnapshot:
    """The ordered ids matching a query, and how long SQLite took (the refresh throttle uses it)."""

    query: ResultQuery
    ids: array[int]
    seconds: float


def load_ids(engine: Engine, query: ResultQuery) -> IdSnapshot:
    """The ids in one value (a JSON array SQLite builds): a row at a time, a million ids cost a
    million Python tuples and GIL hand-overs, which the GUI thread's events then wait behind."""
    sql, params = query.select("r.id")
    start = time.perf_counter()
    with engine.connect() as conn:
        cursor = driver_connection(conn.connection).cursor()
        try:
            # the subquery keeps its ORDER BY: SQLite never flattens an ordered subquery into an
            # aggregate (flattening rule 16), so the array is in grid order
            (text,) = cursor.execute(f"SELECT json_group_array(id) FROM ({sql}) AS q", params).fetchone()
        finally:
            cursor.close()
    ids = id_array(text)
    return IdSnapshot(query, ids, time.perf_counter() - start)


#: characters of the id array parsed at a time: ~9,000 ids, their list ~0.4 MB (as fast as 256K slices,
#: 1.2x faster than one json.loads of a million: 84 vs 102 ms CPU)
ID_SLICE_CHARS = 1 << 16


def id_array(text: str) -> array[int]:
    """A JSON array of integers (``[1,2,3]``) as an ``array('q')``, parsed a slice at a time.

    ``json.loads`` of the whole text holds every id as a Python int in a list at once (a million:
    ~40 MB beside the 8 MB array, the window's peak memory); a slice's list is freed before the
    next, so the text and the array are all that a million ids cost, at the same speed."""
    ids = array("q")
    end = text.rfind("]")
    pos = text.find("[") + 1
    while 0 < pos < end:
        cut = text.find(",", min(pos + ID_SLICE_CHARS, end), end)
        if cut < 0:
            cut = end
        ids.fromlist(json.loads("[" + text[pos:cut] + "]"))
        pos = cut + 1
    return ids


@dataclass(slots=True)
class ResultRow:
    """One grid row as the cells show it; long texts are cut at ``CELL_CHARS``."""

    id: int
    idx: int
    sample_id: str
    input: str
    completion: str
    expected: str
    score: float | None
    scores: dict[str, float]
    status: str
    error: str
    latency_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    label: str = ""  # the human label of the sample in the grid's label set ("" = unlabelled)


_PAGE_SQL = (
    "SELECT r.id, r.sample_idx, r.sample_id, substr(s.input_text, 1, {n}), substr(s.completion, 1, {n}),"
    " substr(s.expected, 1, {n}), r.score, r.scores, r.status, substr(r.error, 1, {n}), r.duration_ms,"
    " r.prompt_tokens, r.completion_tokens, r.cached, {label}"
    " FROM results r LEFT JOIN samples s ON s.dataset_id = ? AND s.idx = r.sample_idx"
    " WHERE r.id IN ({marks})"
)


def load_rows(engine: Engine, dataset_id: int, ids: list[int], label_set_id: int | None = None) -> dict[int, ResultRow]:
    """The rows of ``ids`` (a page: a hundred or so), keyed by id. Fast enough for the GUI thread."""
    if not ids:
        return {}
    label = "''" if label_set_id is None else current_label_sql(label_set_id, LABEL_TEXT)
    sql = _PAGE_SQL.format(n=CELL_CHARS, marks=",".join("?" * len(ids)), label=label)
    with engine.connect() as conn:
        cursor = driver_connection(conn.connection).cursor()
        try:
            rows = cursor.execute(sql, [dataset_id, *ids]).fetchall()
        finally:
            cursor.close()
    out: dict[int, ResultRow] = {}
    for (rid, idx, sid, inp, comp, exp, score, scores, status, error, ms, ptok, ctok, cached, lab) in rows:
        out[rid] = ResultRow(
            rid, idx, sid, inp or "", comp or "", exp or "", score,
            _loads(scores) if scores else {}, status, error or "", ms or 0.0, ptok or 0, ctok or 0, bool(cached),
            lab or "",
        )
    return out


def _loads(text: str) -> JsonValue:
    try:
        return json.loads(text)
    except ValueError:
        return {}


def load_result(engine: Engine, dataset_id: int, result_id: int) -> JsonObject | None:
    """One whole result with its sample's stored JSON: what the detail pane shows."""
    sql = (
        "SELECT r.*, s.data AS sample_data FROM results r"
        " LEFT JOIN samples s ON s.dataset_id = ? AND s.idx = r.sample_idx WHERE r.id = ?"
    )
    with engine.connect() as conn:
        cursor = driver_connection(conn.connection).cursor()
        try:
            cursor.execute(sql, (dataset_id, result_id))
            row = cursor.fetchone()
            names = [d[0] for d in cursor.description] if row is not None else []
        finally:
            cursor.close()
    if row is None:
        return None
    data = dict(zip(names, row, strict=True))
    for key in ("scores", "details", "raw", "sample_data"):
        if data.get(key) is not None:
            data[key] = _loads(data[key]) if key != "raw" else _raw(data[key])
    data["cached"] = bool(data.get("cached"))
    graders = _suite_graders(engine, data)
    if graders is not None:
        data["graders"] = graders
    return data


def judged(entry: JsonObject) -> bool:
    """A grader's result that a judge gave: it has a rationale or judge calls."""
    details = entry.get("details") or {}
    return bool(entry.get("rationale") or (isinstance(details, dict) and details.get("calls")))


def judges_first(graders: list[JsonObject]) -> list[JsonObject]:
    """A suite sample's graders with the judges (a rationale or judge calls) first, then the others,
    each group in suite order: the window's detail pane and ``runs show --sample`` both read this."""
    return [g for g in graders if judged(g)] + [g for g in graders if not judged(g)]


_GRADER_FIELDS = ("status", "score", "scores", "rationale", "details", "error", "raw", "duration_ms",
                  "prompt_tokens", "completion_tokens", "cached")


def _suite_graders(engine: Engine, result: JsonObject) -> list[JsonObject] | None:
    """A suite run's sample: each grader's result (key, version, score, rationale ...) in slot order;
    None for a run of one grader. A plain score has no row of its own: it is read from ``scores``."""
    with engine.connect() as conn:
        cursor = driver_connection(conn.connection).cursor()
        try:
            suite = cursor.execute("SELECT suite FROM runs WHERE id = ?", (result.get("run_id"),)).fetchone()
            if not suite or not suite[0]:
                return None
            slots = cursor.execute("SELECT slot, grader_key, grader_version FROM run_graders WHERE run_id = ?"
                                   " ORDER BY slot", (result["run_id"],)).fetchall()
            stored = {r[0]: r[1:] for r in cursor.execute(
                "SELECT slot, " + ", ".join(_GRADER_FIELDS) + " FROM grader_results WHERE run_id = ?"
                " AND sample_idx = ?", (result["run_id"], result.get("sample_idx"))).fetchall()}
        finally:
            cursor.close()
    scores = result.get("scores") or {}
    out = []
    for slot, key, version in slots:
        if slot in stored:
            entry = dict(zip(_GRADER_FIELDS, stored[slot], strict=True))
            for name in ("scores", "details"):
                entry[name] = _loads(entry[name]) if entry[name] else {}
            entry["raw"] = _raw(entry["raw"]) if entry["raw"] is not None else None
            entry["cached"] = bool(entry["cached"])
        else:
            entry = {"status": "ok", "score": scores.get(key), "scores": {}, "rationale": None, "details": {},
                     "error": None, "raw": None}
        out.append({"grader": key, "version": version, **entry})
    return out
def result_id_of(engine: Engine, run_id: int, sample: str) -> int | None:
    """The id of run ``run_id``'s result for sample id ``sample`` (else, when ``sample`` is a number,
    for the sample at that index); None when the run has no such sample."""
    with engine.connect() as conn:
        raw = driver_connection(conn.connection)
        row = raw.execute("SELECT id FROM results WHERE run_id = ? AND sample_id = ? ORDER BY id DESC LIMIT 1",
                          (run_id, sample)).fetchone()
        if row is None and sample.strip().lstrip("-").isdigit():
            row = raw.execute("SELECT id FROM results WHERE run_id = ? AND sample_idx = ? ORDER BY id DESC LIMIT 1",
                              (run_id, int(sample))).fetchone()
    return None if row is None else int(row[0])


def _raw(text: str) -> JsonValue:
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass
class RunSummary:
    """What the header above the grid shows: the run, its aggregates and a score histogram."""

    run: RunInfo
    dataset_id: int
    aggregates: Any  # engine/summary.py RunAggregates: the run's figures
    bins: list[int]
    low: float
    high: float
    seconds: float = 0.0
    #: the verdict and usage the window adds (ui/results/ci_reports.py ``RunFigures``)
    figures: Any = None


_BUCKET_SQL = "min(CAST(({score} - ?) / ? AS INTEGER), ?)"
#: a score the histogram counts: a finite number (±inf and NaN are no score, as the pass rule says)
_FINITE = f"score BETWEEN {-LARGEST!r} AND {LARGEST!r}"
#: the halved score of a range past the largest double (a score under 1e-300 counts as 0: PostgreSQL
#: fails a product that rounds to 0, "underflow")
_HALVED = "(CASE WHEN abs(score) < 1e-300 THEN 0.0 ELSE score * 0.5 END)"


def histogram(engine: Engine, run_id: int, bins: int = 20) -> tuple[list[int], float, float]:
    """Counts of scored results in ``bins`` equal buckets over the observed range: bucket
    ``min(CAST((score - low) / width AS INTEGER), bins - 1)``. On SQLite, one range count a bucket
    off the ``(run_id, score)`` index (a million results: each index entry walked once, no sort),
    each edge then checked with the bucket's own expression on the few scores a hair from it, so
    the counts are exactly the GROUP BY's; elsewhere the GROUP BY itself."""
    with engine.connect() as conn:
        raw = driver_connection(conn.connection)
        low, high = raw.execute(
            f"SELECT min(score), max(score) FROM results WHERE run_id = ? AND {_FINITE}", (run_id,)
        ).fetchone()
        if low is None:
            return [0] * bins, 0.0, 1.0
        if low >= 0.0 and high <= 1.0:  # the usual case: keep the axis at 0..1 so runs compare
            low, high = 0.0, 1.0
        elif low == high:
            low, high = low - 0.5, high + 0.5
        # a range past the largest double (a teammate's -1e308 and 1e308): the buckets of halved scores
        scale = 1.0 if math.isfinite(high - low) else 0.5
        bucket_sql = _BUCKET_SQL.format(score="score" if scale == 1.0 else _HALVED)
        start, width = low * scale, (high * scale - low * scale) / bins
        counts = [0] * bins
        if conn.dialect.name != "sqlite":  # PostgreSQL's CAST rounds: its buckets are its own GROUP BY's
            for bucket, n in raw.execute(
                f"SELECT {bucket_sql} AS b, count(*) FROM results WHERE run_id = ? AND {_FINITE} GROUP BY b",
                (start, width, bins - 1, run_id),
            ):
                counts[max(0, int(bucket))] += n
            return counts, float(low), float(high)
        edges = [(start + i * width) / scale for i in range(1, bins)]
        for i in range(bins):
            lower = "score >= ?" if i else _FINITE
            upper = " AND score < ?" if i < bins - 1 else f" AND {_FINITE}"
            params = [run_id, *([edges[i - 1]] if i else []), *([edges[i]] if i < bins - 1 else [])]
            (counts[i],) = raw.execute(f"SELECT count(*) FROM results WHERE run_id = ? AND {lower}{upper}",
                                       params).fetchone()
        for i, edge in enumerate(edges, start=1):  # scores a hair from an edge: the bucket expression decides
            near = abs(edge) * 1e-9 + width / scale * 1e-9
            for score, bucket, n in raw.execute(
                f"SELECT score, {bucket_sql}, count(*) FROM results WHERE run_id = ? AND score >= ? AND score <= ?"
                " GROUP BY score", (start, width, bins - 1, run_id, edge - near, edge + near)):
                placed = i - 1 if score < edge else i
                bucket = max(0, int(bucket))
                if bucket != placed:
                    counts[placed] -= n
                    counts[bucket] += n
    return counts, float(low), float(high)


def load_summary(library: Any, run_id: int, live: bool,
                 aggregates_of: Callable[[Library, RunInfo, bool], Any]) -> RunSummary:
    """The run with its figures (``aggregates_of(library, run, live)``: engine/summary.py
    ``band_summary``, which the caller above the store hands down) and a histogram."""
    start = time.perf_counter()
    run = library.runs.get(run_id)
    dataset_id = library.runs.raw(run_id).dataset_id
    aggregates = aggregates_of(library, run, live)
    bins, low, high = histogram(library.engine, run_id)
    return RunSummary(run, dataset_id, aggregates, bins, low, high, time.perf_counter() - start)
