"""A run's results as CSV or JSONL, joined with the samples they grade (CLI and window share it)."""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

from studio.core.store import Library


def result_record(row: dict[str, Any]) -> dict[str, Any]:
    """The per-sample JSON that scripts rely on (``runs show --json``)."""
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


def write_results(library: Library, run_id: int, out: TextIO, fmt: str = "csv") -> int:
    """Write every result of the run; returns how many rows were written."""
    info = library.runs.get(run_id)
    dataset = library.datasets.get(info.dataset, include_deleted=True)
    samples = dict(library.datasets.iter_indexed(dataset.id, limit=info.total))
    rows = library.runs.results(run_id)
    if fmt == "jsonl":
        for r in rows:
            s = samples.get(r["sample_idx"])
            record = result_record(r) | {"input": s.input_text() if s else None,
                                         "completion": s.completion if s else None,
                                         "expected": s.expected if s else None}
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        return len(rows)
    if fmt != "csv":
        raise ValueError(f"unknown format {fmt!r}: csv or jsonl")
    writer = csv.writer(out)
    metric_keys = sorted({k for r in rows for k in r["scores"]})
    writer.writerow(["index", "sample_id", "status", "score", *metric_keys, "error", "rationale",
                     "duration_ms", "prompt_tokens", "completion_tokens", "cached", "input",
                     "completion", "expected"])
    for r in rows:
        s = samples.get(r["sample_idx"])
        writer.writerow([r["sample_idx"], r["sample_id"], r["status"], r["score"],
                         *[r["scores"].get(k) for k in metric_keys], r["error"], r["rationale"],
                         r["duration_ms"], r["prompt_tokens"], r["completion_tokens"], r["cached"],
                         s.input_text() if s else "", s.completion if s else "", s.expected if s else ""])
    return len(rows)
