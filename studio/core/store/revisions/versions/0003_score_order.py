"""Results by score in sample order: the score index gains the sample index as its last column.

Why: the reports list a run's lowest scores with ties in sample order (``ORDER BY score,
sample_idx``), and an index on (run_id, score) gave SQLite the scores in order but the ties in row
order, so every tied row was sorted first: a million-sample exact-match run sorted its ~500,000
zeros to print five of them (0.19 s, now 0.0003 s). The grid's sort by score ties in sample order
too (store/results_query.py), served by the same index. Writing a row costs the same
(``bench/store_writes.py --variants``: 1.02x the old index's insert). A library of a million results
rebuilds the index once, ~2 s.
"""

from __future__ import annotations

from alembic import op

revision = "0003_score_order"
down_revision = "0002_authors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_results_run_score", table_name="results")
    op.create_index("ix_results_run_score", "results", ["run_id", "score", "sample_idx"])
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        bind.exec_driver_sql("PRAGMA user_version = 10")
