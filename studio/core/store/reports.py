"""A run's results as CSV or JSONL, joined with the samples they grade, streamed from SQL.

The CLI (``runs export``) and the window's "Export CSV…" share it. Rows come off one raw sqlite3
cursor in pages of ``FETCH_ROWS``, so exporting a million results costs a cursor, not a million dicts;
the window passes its grid's ``ResultQuery`` (its filter and sort), the CLI the whole run by index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from sqlalchemy import Engine

from studio.core.json_types import JsonObject, JsonValue
from studio.core.outside import printable_json
from studio.core.safe_files import open_text
from studio.core.spreadsheet import CsvWriter
from studio.core.store import Library
from studio.core.store.database import DriverRow, driver_connection
from studio.core.store.results_query import ResultQuery

FETCH_ROWS = 2000
FORMATS = ("csv", "jsonl")

HEADER_HEAD = ["index", "sample_id", "status", "score"]
HEADER_TAIL = ["error", "rationale", "duration_ms", "prompt_tokens", "completion_tokens", "cached",
               "input", "completion", "expected"]
METRIC_PREFIX = "metric."  # each per-metric score column is ``metric.<key>``

#: the result columns every export reads, in the order ``_rows`` unpacks them
_COLUMNS = ("r.sample_idx, r.sample_id, r.status, r.score, r.scores, r.error, r.rationale, r.duration_ms,"
            " r.prompt_tokens, r.completion_tokens, r.cached, r.details, r.raw,"
            " s.input_text, s.completion, s.expected")

Progress = Callable[[int], None]


def result_record(row: JsonObject) -> JsonObject:
    """The per-sample JSON that scripts rely on (``runs show --json``, each ``--format jsonl`` line)."""
    return {
        "sample_id": row["sample_id"],
        "index": row["sample_idx"],
        "status": row["status"],
        "score": row["score"],
        "scores": row["scores"],
        "error": row["error"],
        "rationale": row["rationale"],
        "duration_ms": row["duration_ms"],
        "prompt_tokens": row["prompt_tokens"],
        "completion_tokens": row["completion_tokens"],
        "cached": row["cached"],
        "details": row["details"],
        "raw": row["raw"],
    }


GRADER_PREFIX = "grader."  # a suite run's CSV: one score column ``grader.<key>`` per grader


def suite_keys(engine: Engine, run_id: int) -> list[str] | None:
    """A suite run's grader keys in slot order (None for a run of one grader)."""
    with engine.connect() as conn:
        raw = driver_connection(conn.connection)
        (suite,) = raw.execute("SELECT suite FROM runs WHERE id = ?", (run_id,)).fetchone() or (None,)
        if not suite:
            return None
        return [r[0] for r in raw.execute("SELECT grader_key FROM run_graders WHERE run_id = ? ORDER BY slot",
                                          (run_id,))]


def _grader_key(engine: Engine, run_id: int) -> str | None:
    with engine.connect() as conn:
        raw = driver_connection(conn.connection)
        row = raw.execute("SELECT g.key FROM runs JOIN graders g ON g.id = runs.grader_id WHERE runs.id = ?",
                          (run_id,)).fetchone()
    return None if row is None else row[0]


def metric_keys(engine: Engine, run_id: int) -> list[str]:
    """The per-metric score names of a run: one CSV column each, sorted."""
    with engine.connect() as conn:
        raw = driver_connection(conn.connection)
        rows = raw.execute(
            "SELECT DISTINCT j.key FROM results, json_each(results.scores) AS j"
            " WHERE results.run_id = ? AND results.scores IS NOT NULL", (run_id,)
        ).fetchall()
    return sorted(r[0] for r in rows)


def _json(text: str | None, default: JsonValue = None) -> JsonValue:
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return text


def _rows(engine: Engine, query: ResultQuery, progress: Progress | None,
          limit: int | None = None, columns: str = _COLUMNS) -> Iterator[DriverRow]:
    """Every result ``query`` selects (the first ``limit`` of them), in its order, with its sample's
    texts (a streamed cursor); ``columns`` may name the sample's other fields (``s.data``)."""
    sql, params = query.select(columns)
    if " LEFT JOIN samples " not in sql:  # the filter/sort did not join the samples: the export needs them
        sql = sql.replace("FROM results r", "FROM results r LEFT JOIN samples s ON s.dataset_id = ? AND"
                          " s.idx = r.sample_idx", 1)
        params = [query.dataset_id, *params]
    if limit is not None:  # in SQL: SQLite stops walking the run's index there, PostgreSQL sends no more
        sql += " LIMIT ?"
        params = [*params, max(0, int(limit))]
    written = 0
    with engine.connect() as conn:
        cursor = driver_connection(conn.connection).cursor()
        try:
            cursor.execute(sql, params)
            while batch := cursor.fetchmany(FETCH_ROWS):
                yield from batch
                written += len(batch)
                if progress is not None:
                    progress(written)
        finally:
            cursor.close()


#: the streamed rows with other columns (the HTML viewer reads ``s.data``: the sample's whole thread)
query_rows = _rows


def write_csv(engine: Engine, query: ResultQuery, out: TextIO, progress: Progress | None = None, *,
              raw: bool = False) -> int:
    """CSV of the results ``query`` selects; returns how many rows were written. Text cells a
    spreadsheet would read as formulas get a leading ``'`` unless ``raw`` (studio.core.spreadsheet)."""
    graders = suite_keys(engine, query.run_id)
    keys = metric_keys(engine, query.run_id) if graders is None else graders
    prefix = METRIC_PREFIX if graders is None else GRADER_PREFIX
    writer = CsvWriter(out, raw=raw)
    # prefixed: a metric named like a fixed column ("score", "error") must not give a duplicate header
    writer.writerow([*HEADER_HEAD, *(f"{prefix}{k}" for k in keys), *HEADER_TAIL])
    count = 0
    for (idx, sid, status, score, scores, error, rationale, ms, ptok, ctok, cached, _details, _raw,
         inp, comp, exp) in _rows(engine, query, progress):
        values = _json(scores, {}) if scores else {}
        if not isinstance(values, dict):
            values = {}
        writer.writerow([idx, sid, status, score, *[values.get(k) for k in keys], error, rationale,
                         ms, ptok, ctok, bool(cached), inp or "", comp or "", exp or ""])
        count += 1
    return count


def iter_records(engine: Engine, query: ResultQuery, progress: Progress | None = None, *,
                 limit: int | None = None) -> Iterator[JsonObject]:
    """Each result ``query`` selects (the first ``limit``) as ``result_record`` plus its sample's
    input, completion and expected; a suite run's ``scores`` has every grader's key (null where it
    said NA or failed), a one-grader run's record names its ``grader``."""
    graders = suite_keys(engine, query.run_id)
    grader = None if graders is not None else _grader_key(engine, query.run_id)
    for (idx, sid, status, score, scores, error, rationale, ms, ptok, ctok, cached, details, raw,
         inp, comp, exp) in _rows(engine, query, progress, limit):
        record = result_record({
            "sample_idx": idx, "sample_id": sid, "status": status, "score": score,
            "scores": _json(scores) or {}, "error": error, "rationale": rationale, "duration_ms": ms,
            "prompt_tokens": ptok, "completion_tokens": ctok, "cached": bool(cached),
            "details": _json(details) or {}, "raw": _json(raw),
        }) | {"input": inp, "completion": comp, "expected": exp}
        if graders is not None:
            record["scores"] = {k: record["scores"].get(k) for k in graders}
        else:
            record["grader"] = grader  # as ``runs show --json`` names it
        yield record


def write_jsonl(engine: Engine, query: ResultQuery, out: TextIO, progress: Progress | None = None, *,
                raw: bool = False) -> int:
    """One JSON object a line: ``iter_records``'s. ``raw`` is for CSV only: JSON is never escaped."""
    count = 0
    for record in iter_records(engine, query, progress):
        out.write(printable_json(json.dumps(record, ensure_ascii=False, default=str)) + "\n")
        count += 1
    return count


def export_csv(engine: Engine, query: ResultQuery, path: Path | str, progress: Progress | None = None) -> int:
    """Write the results ``query`` selects to the CSV file ``path``; returns how many rows were written."""
    with open_text(path, newline="") as handle:  # never through a link planted at ``path``
        return write_csv(engine, query, handle, progress)


def run_query(library: Library, run_id: int) -> ResultQuery:
    """The whole run in sample order (raises ``NotFound`` for an unknown run)."""
    return ResultQuery(run_id, library.runs.raw(run_id).dataset_id)


def write_results(engine: Engine, query: ResultQuery, out: TextIO, fmt: str = "csv",
                  progress: Progress | None = None, *, raw: bool = False) -> int:
    """Write the results ``query`` selects as ``csv`` or ``jsonl``; returns how many rows were written.
    ``raw`` writes CSV cells unescaped (for machine readers; JSONL is never escaped)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: csv or jsonl")
    writer = write_csv if fmt == "csv" else write_jsonl
    return writer(engine, query, out, progress, raw=raw)
