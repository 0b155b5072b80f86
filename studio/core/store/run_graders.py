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
import math
from typing import Any

from pydantic import BaseModel

from studio.core.near_names import did_you_mean

from .errors import NotFound
from .suites import score_range

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval

_COLUMNS = ("sample_idx", "sample_id", "status", "score", "scores", "rationale", "details", "error", "raw",
            "duration_ms", "prompt_tokens", "completion_tokens", "cached", "cached_tokens")


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


class GraderAggregates(BaseModel):
    key: str
    version: int
    slot: int
    weight: float
    threshold: float
    #: mean (with its normal-approximation 95% interval), pass rate and n over scored results
    aggregates: dict[str, Any]
    #: ok, error, invalid and na (the NA of a judge: left out of the mean, never a 0)
    counts: dict[str, int]


def _run_row(library: Any, run_id: int) -> Any:
    return library.runs.raw(run_id)  # NotFound for an unknown run


def run_graders(library: Any, run_id: int) -> list[RunGrader]:
    """The graders of run ``run_id`` by slot (one for a run of one grader)."""
    row = _run_row(library, run_id)
    threshold = float(json.loads(row.settings or "{}").get("pass_threshold", 0.5))
    out = []
    for slot in library.runs.slots(run_id):
        definition = library.graders.version(slot.grader_key, slot.grader_version).definition
        out.append(RunGrader(slot=slot.slot, key=slot.grader_key, version=slot.grader_version,
                             kind=definition.kind, weight=slot.weight,
                             threshold=threshold if slot.threshold is None else slot.threshold,
                             score_range=score_range(definition)))
    return out


def _is_suite(row: Any) -> bool:
    return bool(row.suite)


def key_path(key: str) -> str:
    return '$."' + key.replace('"', '') + '"'


def rows_sql(suite: bool) -> str:
    """The per-sample rows of one grader, columns named as ``_COLUMNS``. Numbered parameters: a
    suite run ?1 slot, ?2 JSON path of the key, ?3 run, ?4 dataset; a run of one grader ?1 run."""
    if not suite:
        return "SELECT " + ", ".join(f"r.{c} AS {c}" for c in _COLUMNS) + " FROM results r WHERE r.run_id = ?1"
    return (
        "SELECT r.sample_idx AS sample_idx, r.sample_id AS sample_id, coalesce(g.status, 'ok') AS status,"
        " CASE WHEN g.status IS NULL THEN CAST(json_extract(r.scores, ?2) AS DOUBLE PRECISION) ELSE g.score END AS score,"
        " g.scores AS scores, g.rationale AS rationale, g.details AS details, g.error AS error, g.raw AS raw,"
        " coalesce(g.duration_ms, 0) AS duration_ms, coalesce(g.prompt_tokens, 0) AS prompt_tokens,"
        " coalesce(g.completion_tokens, 0) AS completion_tokens, coalesce(g.cached, 0) AS cached,"
        " coalesce(g.cached_tokens, 0) AS cached_tokens"
        " FROM results r LEFT JOIN grader_results g ON g.run_id = r.run_id AND g.slot = ?1"
        " AND g.sample_idx = r.sample_idx WHERE r.run_id = ?3"
        " UNION ALL SELECT g.sample_idx, s.sample_id, g.status, g.score, g.scores, g.rationale, g.details,"
        " g.error, g.raw, g.duration_ms, g.prompt_tokens, g.completion_tokens, g.cached, g.cached_tokens"
        " FROM grader_results g LEFT JOIN samples s ON s.dataset_id = ?4 AND s.idx = g.sample_idx"
        " WHERE g.run_id = ?3 AND g.slot = ?1 AND NOT EXISTS"
        " (SELECT 1 FROM results r2 WHERE r2.run_id = g.run_id AND r2.sample_idx = g.sample_idx)"
    )


def _params(row: Any, slot: int, key: str) -> tuple[Any, ...]:
    if not _is_suite(row):
        return (row.id,)
    return (slot, key_path(key), row.id, row.dataset_id)


def _slot_of(library: Any, run_id: int, key: str) -> tuple[int, str]:
    slots = library.runs.slots(run_id)
    for slot in slots:
        if slot.grader_key == key:
            return slot.slot, key
    raise NotFound(f"run {run_id} has no grader {key!r}{did_you_mean(key, (s.grader_key for s in slots))}")


def _loads(text: Any) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def grader_results(library: Any, run_id: int, key: str) -> list[dict[str, Any]]:
    """Grader ``key``'s result for each sample of the run, in sample order (the same fields as
    ``runs show --json``, ``grader`` included)."""
    row = _run_row(library, run_id)
    slot, _ = _slot_of(library, run_id, key)
    metric = None
    if _is_suite(row):
        definition = library.graders.version(key, next(s.grader_version for s in library.runs.slots(run_id)
                                                        if s.slot == slot)).definition
        metric = definition.metric.key
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


def graders_with_results(library: Any, run_id: int) -> list[tuple[RunGrader, list[dict[str, Any]]]]:
    """Every grader of the run with its results (what a report of a finished run needs)."""
    return [(g, grader_results(library, run_id, g.key)) for g in run_graders(library, run_id)]


def grader_aggregates(library: Any, run_id: int) -> list[GraderAggregates]:
    """Per grader: mean with its 95% interval, pass rate at the grader's threshold, n; and counts."""
    row = _run_row(library, run_id)
    suite = _is_suite(row)
    out = []
    for grader in run_graders(library, run_id):
        params = (*_params(row, grader.slot, grader.key), grader.threshold)
        found = _aggregate(library, rows_sql(suite), params, "?5" if suite else "?2")
        out.append(GraderAggregates(key=grader.key, version=grader.version, slot=grader.slot, weight=grader.weight,
                                    threshold=grader.threshold, **found))
    return out


def overall_aggregates(library: Any, run_id: int) -> dict[str, Any]:
    """A suite run's overall score over its samples, shaped as one grader's (aggregates, counts)."""
    row = _run_row(library, run_id)
    threshold = float(json.loads(row.settings or "{}").get("pass_threshold", 0.5))
    return _aggregate(library, rows_sql(False), (row.id, threshold), "?2")


def _aggregate(library: Any, rows: str, params: tuple[Any, ...], threshold: str) -> dict[str, Any]:
    sql = (
        "SELECT count(CASE WHEN status = 'ok' THEN 1 END), count(CASE WHEN status = 'error' THEN 1 END),"
        " count(CASE WHEN status = 'invalid' THEN 1 END), count(CASE WHEN status = 'skipped' THEN 1 END),"
        " count(CASE WHEN status IN ('ok', 'invalid') THEN score END),"
        " avg(CASE WHEN status IN ('ok', 'invalid') THEN score END),"
        " sum(CASE WHEN status IN ('ok', 'invalid') THEN score * score END),"
        f" avg(CASE WHEN status IN ('ok', 'invalid') THEN (CASE WHEN score >= {threshold} THEN 1.0"
        f" WHEN score IS NOT NULL THEN 0.0 END) END)"
        f" FROM ({rows}) AS src"
    )
    with library.engine.connect() as conn:
        ok, error, invalid, na, n, mean, sumsq, pass_rate = conn.exec_driver_sql(sql, params).one()
    low = high = None
    if n and n > 1 and mean is not None:
        variance = max(0.0, (sumsq - n * mean * mean) / (n - 1))
        half = Z95 * math.sqrt(variance / n)
        low, high = mean - half, mean + half
    elif n == 1:
        low = high = mean
    return {"aggregates": {"mean": mean, "mean_ci": [low, high], "pass_rate": pass_rate, "n": n or 0},
            "counts": {"ok": ok or 0, "error": error or 0, "invalid": invalid or 0, "na": na or 0}}
