"""CSV export of a run's results, streamed from SQL (no Qt; a candidate for ``studio.core``).

The columns are those of ``grader-studio runs export --format csv``; the rows follow the grid's
current filter and sort. Unlike the CLI (which loads the run into memory) this streams a cursor,
so exporting a million results costs a cursor, not a million dicts.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from .query import ResultQuery

HEADER_HEAD = ["index", "sample_id", "status", "score"]
HEADER_TAIL = ["error", "rationale", "duration_ms", "prompt_tokens", "completion_tokens", "cached",
               "input", "completion", "expected"]


def metric_keys(engine: Engine, run_id: int) -> list[str]:
    with engine.connect() as conn:
        raw = conn.connection.driver_connection  # type: ignore[union-attr]
        rows = raw.execute(
            "SELECT DISTINCT j.key FROM results, json_each(results.scores) AS j"
            " WHERE results.run_id = ? AND results.scores IS NOT NULL", (run_id,)
        ).fetchall()
    return sorted(r[0] for r in rows)


def export_csv(engine: Engine, query: ResultQuery, path: Path | str,
               progress: Callable[[int], None] | None = None) -> int:
    """Write the results ``query`` selects to ``path``; returns how many rows were written."""
    keys = metric_keys(engine, query.run_id)
    columns = ("r.sample_idx, r.sample_id, r.status, r.score, r.scores, r.error, r.rationale, r.duration_ms,"
               " r.prompt_tokens, r.completion_tokens, r.cached, s.input_text, s.completion, s.expected")
    sql, params = query.select(columns)
    if " LEFT JOIN samples " not in sql:  # the text filter/sort did not join the samples: do it here
        sql = sql.replace("FROM results r", "FROM results r LEFT JOIN samples s ON s.dataset_id = ? AND"
                          " s.idx = r.sample_idx", 1)
        params = [query.dataset_id, *params]
    written = 0
    with engine.connect() as conn, Path(path).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*HEADER_HEAD, *keys, *HEADER_TAIL])
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(sql, params)
            while batch := cursor.fetchmany(2000):
                for (idx, sid, status, score, scores, error, rationale, ms, ptok, ctok, cached,
                     inp, comp, exp) in batch:
                    values = json.loads(scores) if scores else {}
                    writer.writerow([idx, sid, status, score, *[values.get(k) for k in keys], error, rationale,
                                     ms, ptok, ctok, bool(cached), inp or "", comp or "", exp or ""])
                written += len(batch)
                if progress is not None:
                    progress(written)
        finally:
            cursor.close()
    return written
