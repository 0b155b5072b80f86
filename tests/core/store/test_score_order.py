"""Results by score in sample order (revision 0003): the score index holds the sample index, so the
reports' lowest scores and the grid's sort by score read their ties in order from the index
instead of sorting every tied row (a million-sample exact-match run ties ~500,000 zeros)."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

from studio.core.models import BuiltinGrader, Outcome, Sample
from studio.core.store import Library
from studio.core.store.results_query import ResultQuery, load_ids
from studio.core.store.run_graders import rows_sql

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def score_index_columns(lib: Library) -> list[str]:
    with lib.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            return [r[2] for r in conn.exec_driver_sql("PRAGMA index_info('ix_results_run_score')")]
        definition = conn.exec_driver_sql(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_results_run_score'").scalar()
        return [c.strip() for c in str(definition).split("(", 1)[1].rstrip(")").split(",")]


def tied_run(lib: Library, n: int = 60) -> tuple[int, int]:
    """A run whose scores tie in three values, its rows written in shuffled sample order (so row
    order is not sample order)."""
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("d", [Sample(id=f"s{i}", completion="a", expected="a") for i in range(n)])
    run = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, n)
    order = list(range(n))
    random.Random(3).shuffle(order)
    for i in order:
        lib.runs.write_results(run.id, [(i, f"s{i}", Outcome(status="ok", score=(i % 3) / 2))])
    return run.id, dataset.id


def test_the_score_index_ends_with_the_sample_index(library: Library) -> None:
    assert score_index_columns(library) == ["run_id", "score", "sample_idx"]


def test_ties_come_in_sample_order_in_the_grid_and_the_reports(library: Library) -> None:
    run_id, dataset_id = tied_run(library)
    with library.engine.connect() as conn:
        sample_of = dict(conn.exec_driver_sql(f"SELECT id, sample_idx FROM results WHERE run_id = {run_id}").all())
        scores = dict(conn.exec_driver_sql(f"SELECT sample_idx, score FROM results WHERE run_id = {run_id}").all())
        # the reports' lowest scores (engine/reports/markdown.py): a run's rows by score, ties by sample
        lowest = [r[0] for r in conn.exec_driver_sql(
            f"SELECT sample_idx FROM ({rows_sql(False)}) AS src ORDER BY score ASC, sample_idx LIMIT 5", (run_id,))]
    in_row_order = [sample_of[i] for i in sorted(sample_of)]
    assert sorted(in_row_order) == list(range(60)) and in_row_order != list(range(60))  # rows not in sample order
    assert lowest == [0, 3, 6, 9, 12]
    for descending in (False, True):
        query = ResultQuery(run_id=run_id, dataset_id=dataset_id).with_sort("score", descending)
        got = [sample_of[i] for i in load_ids(library.engine, query).ids]
        assert got == sorted(scores, key=lambda i: (scores[i], i), reverse=descending)


def test_the_sorts_by_score_read_the_index_without_sorting_ties(tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.sqlite") as lib:
        run_id, dataset_id = tied_run(lib)
        with lib.engine.connect() as conn:
            for descending in (False, True):
                sql, params = ResultQuery(run_id=run_id, dataset_id=dataset_id).with_sort("score", descending).select("r.id")
                plan = " | ".join(r[3] for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, tuple(params)))
                assert "ix_results_run_score" in plan and "TEMP B-TREE" not in plan, plan
            lowest = ("EXPLAIN QUERY PLAN SELECT sample_idx FROM results WHERE run_id = ? AND status IN ('ok', 'invalid')"
                      " AND score IS NOT NULL ORDER BY score ASC, sample_idx LIMIT 5")
            plan = " | ".join(r[3] for r in conn.exec_driver_sql(lowest, (run_id,)))
            assert "ix_results_run_score" in plan and "TEMP B-TREE" not in plan, plan


def test_a_library_of_the_last_release_gets_the_index_and_keeps_its_results(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "library-0.1.0.sqlite", path)
    before = sqlite3.connect(path)
    stored = before.execute("SELECT * FROM results ORDER BY id").fetchall()
    before.close()
    with Library.open(path) as lib:
        assert score_index_columns(lib) == ["run_id", "score", "sample_idx"]
    after = sqlite3.connect(path)
    assert after.execute("SELECT * FROM results ORDER BY id").fetchall()[: len(stored)] == stored and stored
    after.close()
