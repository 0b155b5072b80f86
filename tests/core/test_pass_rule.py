"""The one pass rule: its SQL (generated from the same clauses) and its Python reading agree on any
result, including NA, errors, invalid answers, judges' own verdicts and scores exactly at the
threshold; and the readers built on it (the grid's failing filter, the judge-verdict filter, the
pass rate, a run's threshold) say what the rule says."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Float, MetaData, String, Table, Text, create_engine, func, select

from studio.core.models import RunInfo
from studio.core.models.pass_rule import (
    DEFAULT_PASS_THRESHOLD,
    decide,
    decide_result,
    decision_sql,
    decision_sql_text,
    run_threshold,
    word,
)
from studio.core.store.results_query import failing_sql, judge_verdict_sql, outcome_word

# (NaN, ±inf: no score, NA, in Python and in SQL alike; SQLite stores NaN as NULL)
SCORES = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, -1.0, 0.3, 0.30000000000000004, float("nan"),
                                               float("inf"), float("-inf")]),
                   st.floats(min_value=-10, max_value=10, allow_nan=False))
VERDICTS = st.one_of(st.none(), st.sampled_from(["PASS", "FAIL", "NA", "pass", "MET", ""]), st.integers(0, 2))
RESULTS = st.tuples(st.sampled_from(["ok", "error", "invalid", "skipped", "weird"]), SCORES, VERDICTS,
                    st.booleans())
THRESHOLDS = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 0.3, 0.30000000000000004, -1.0]),
                       st.floats(min_value=-10, max_value=10, allow_nan=False))


def _details(verdict: object, with_details: bool) -> str | None:
    if not with_details and verdict is None:
        return None
    return json.dumps({"verdict": verdict} if verdict is not None else {"other": 1})


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(RESULTS, min_size=1, max_size=30), THRESHOLDS, st.data())
def test_sql_and_python_decide_the_same(rows: list[tuple], threshold: float, data: st.DataObject) -> None:
    # a threshold equal to one of the scores half the time: the boundary is where copies drifted
    scored = [r[1] for r in rows if r[1] is not None and math.isfinite(r[1])]  # (a threshold is finite)
    if scored and data.draw(st.booleans()):
        threshold = data.draw(st.sampled_from(scored))
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE results (id INTEGER PRIMARY KEY, status TEXT, score REAL, details TEXT)")
    conn.executemany("INSERT INTO results (status, score, details) VALUES (?, ?, ?)",
                     [(s, score, _details(v, d)) for s, score, v, d in rows])
    text = decision_sql_text("r.status", "r.score", "r.details", threshold)
    fetched = conn.execute(f"SELECT status, score, details, {text}, {failing_sql(threshold)}, "
                           f"{judge_verdict_sql(threshold)} FROM results r ORDER BY id").fetchall()
    for (status, score, details, in_sql, failing, judge), (_, _, verdict, _) in zip(fetched, rows, strict=True):
        in_python = decide(status, score, verdict, threshold)
        assert in_sql == in_python, (status, score, verdict, threshold)
        assert decide_result({"status": status, "score": score, "details": json.loads(details or "{}")},
                             threshold) == in_python
        assert bool(failing) == (in_python in ("fail", "error"))
        assert judge == {"pass": "PASS", "fail": "FAIL"}.get(in_python)
        assert outcome_word(status, score, json.loads(details or "null"), threshold) == word(status, in_python)
    # the SQLAlchemy expression itself, on a Table, counts the same passes
    engine = create_engine("sqlite://")
    table = Table("results", MetaData(), Column("status", String), Column("score", Float),
                  Column("details", Text))
    table.create(engine)
    with engine.begin() as sa:
        sa.execute(table.insert(), [{"status": s, "score": score, "details": _details(v, d)}
                                    for s, score, v, d in rows])
        verdict = func.json_extract(table.c.details, "$.verdict")
        decision = decision_sql(table.c.status, table.c.score, verdict, threshold)
        passes = sa.execute(select(func.count()).where(decision == "pass")).scalar_one()
    assert passes == sum(decide(s, score, v, threshold) == "pass" for s, score, v, _ in rows)


def test_the_rule_in_words() -> None:
    assert decide("error", 1.0, "PASS", 0.5) == "error"
    assert decide("skipped", None, "NA", 0.5) == "na"
    assert decide("invalid", 0.0, None, 0.0) == "fail"  # an invalid answer never passes
    assert decide("ok", 0.0, "PASS", 0.5) == "pass" and decide("ok", 1.0, "FAIL", 0.5) == "fail"
    assert decide("ok", None, None, 0.5) == "na"
    assert decide("ok", 0.5, None, 0.5) == "pass" and decide("ok", 0.49999, None, 0.5) == "fail"
    assert word("ok", "na") == "NA" and word("invalid", "fail") == "invalid"


def test_one_reader_of_a_runs_threshold() -> None:
    assert run_threshold({}, {}) == DEFAULT_PASS_THRESHOLD
    assert run_threshold({"pass_threshold": 0.8}, {"pass_threshold": 0.6}) == 0.8  # what it was started with
    assert run_threshold({}, {"pass_threshold": 0.6}) == 0.6
    info = RunInfo(id=1, grader_key="g", grader_version=1, dataset="d", status="completed",
                   settings={"pass_threshold": 0.7}, aggregates={"pass_threshold": 0.2},
                   created_at="2026-01-01T00:00:00")
    assert info.pass_threshold == 0.7


def test_a_threshold_that_is_not_finite_is_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        decision_sql_text(threshold=float("inf"))
