"""A million-result run for the results grid: shared by its tests and ``bench/ui_grid.py``.

Importable as ``big_run`` because pytest puts this folder on sys.path; the benchmark loads it by path.
"""

from __future__ import annotations

from studio.core.engine.summary import run_aggregates
from studio.core.models import BuiltinGrader, Sample, Turn
from studio.core.store import Library


def build_big_run(lib: Library, n: int) -> int:
    """A finished run of ``n`` results written straight into SQLite (one INSERT ... SELECT: ~4 s)."""
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("big", (
        Sample(id=f"s{i}", messages=[Turn(role="user", content=f"question {i}")], completion=f"answer {i}",
               expected=f"answer {i}") for i in range(1000)))
    run = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, n)
    raw = lib.engine.raw_connection()
    try:
        raw.execute("BEGIN")
        raw.execute(
            """WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1)
               INSERT INTO results (run_id, sample_idx, sample_id, status, score, duration_ms,
                                    prompt_tokens, completion_tokens, cached, error)
               SELECT ?, i, 's' || i,
                      CASE WHEN i % 50 = 0 THEN 'error' WHEN i % 37 = 0 THEN 'invalid' ELSE 'ok' END,
                      CASE WHEN i % 50 = 0 THEN NULL ELSE ((i * 7919) % 1000) / 1000.0 END,
                      (i % 997) * 1.5, i % 300, i % 40, i % 3 = 0,
                      CASE WHEN i % 50 = 0 THEN 'judge timed out #' || i END
               FROM c""", (n, run.id))
        raw.execute("COMMIT")
    finally:
        raw.close()
    lib.runs.set_status(run.id, "completed", aggregates=run_aggregates(lib, run.id))
    return run.id
