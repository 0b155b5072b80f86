"""A run's answers read the run once: the sections' tallies (``run_graders.run_tallies``), a
run's end (``run_end.end_tallies``) and a report's results (``graders_with_results``) read the
run's row once, the tallies with the pass rule settled for each before any is counted
(``pass_rule.settle``), and give what each part gives asked alone; a run's spend
(``run_spend.run_spend``) reads each grader's stored entry as ``_entry`` finds it. On SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from judge_helpers import qa
from sqlalchemy import event, update

from studio.core.engine.runner import run_grader
from studio.core.models import BuiltinGrader
from studio.core.models.pass_rule import ThresholdNotFinite, decision_sql_text, scored_sql, settle
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.run_end import end_tallies
from studio.core.store.run_graders import (
    STORED_KEY,
    grader_results,
    grader_tallies,
    graders_with_results,
    overall_tally,
    read_settled,
    run_graders,
    run_tallies,
    stored_entries,
    stored_tallies,
)
from studio.core.store.run_spend import SpendOf, run_spend
from studio.core.store.tables import runs


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


@pytest.fixture
def lib(library: Library) -> Library:
    for key, function in (("exact", "exact_match"), ("has", "contains"), ("starts", "starts_with")):
        library.graders.create(BuiltinGrader(key=key, function=function))
    answers = ["Paris", "Lyon, surely", "Paris!", "Marseille"]
    library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", answers[i % 4], "Paris") for i in range(24)])
    library.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="has", weight=2.0, threshold=0.9),
        SuiteMember(grader="starts")]))
    return library


@contextmanager
def rows_read(lib: Library) -> Iterator[list[str]]:
    """The statements that read a run's own row, whole (``runs.raw``) or a column of it: the runs
    table alone, by id."""
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        text = " ".join(statement.split())
        if text.startswith("SELECT runs.") and " FROM runs WHERE runs.id = " in text:
            seen.append(text)

    event.listen(lib.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(lib.engine, "before_cursor_execute", record)


def reopen(lib: Library, run_id: int) -> None:
    """The run as one that may still change (stopped): its tallies are counted from its rows."""
    with lib.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == run_id).values(status="stopped"))


@pytest.mark.parametrize("grading", ["exact", "geo-suite"])
@pytest.mark.parametrize("completed", [True, False])
def test_the_sections_tallies_read_the_run_once(lib: Library, grading: str, completed: bool) -> None:
    run = run_grader(lib, grading, "geo")
    assert run.status == "completed"
    if not completed:
        reopen(lib, run.id)
    info = lib.runs.get(run.id)
    with rows_read(lib) as seen:
        answer = run_tallies(lib, run.id, info)
    assert len(seen) == 1, seen  # it read the row three times, four with a suite's overall score
    graders = run_graders(lib, run.id)
    assert answer.graders == graders and answer.tallies == grader_tallies(lib, run.id, graders)
    assert (answer.overall is not None) == (grading == "geo-suite")
    if answer.overall is not None:
        assert answer.overall == overall_tally(lib, run.id)
        assert answer.overall_bounds == (0.0, 1.0)
    assert [g.threshold for g in answer.graders] == ([0.5] if grading == "exact" else [0.5, 0.9, 0.5])


@pytest.mark.parametrize("grading", ["exact", "geo-suite"])
def test_a_runs_end_reads_the_run_once_and_stores_what_is_counted(lib: Library, grading: str) -> None:
    run = run_grader(lib, grading, "geo")
    kept = json.loads(lib.runs.raw(run.id).aggregates)[STORED_KEY]
    reopen(lib, run.id)
    with rows_read(lib) as seen:
        end = end_tallies(lib, run.id, 0.5, None)
    assert len(seen) == 1, seen  # it read the row twice, then its suite column for the metric sums
    overall, stored = stored_tallies(lib, run.id, 0.5)
    assert not end.as_written and end.overall == overall and end.stored == stored
    assert end.facts == lib.runs.facts(run.id, 0.5)  # the rows' facts as the store reads them alone
    assert set(end.facts.metric_sums) == ({"exact", "has", "starts"} if grading == "geo-suite" else {"score"})
    assert [{k: v for k, v in e.items() if k != "usage"} for e in kept["graders"]] == stored["graders"]
    assert end.facts.tally == overall and sum(end.facts.statuses.values()) == 24


@pytest.mark.parametrize("grading", ["exact", "geo-suite"])
def test_a_report_reads_the_run_and_its_graders_once(lib: Library, grading: str) -> None:
    run = run_grader(lib, grading, "geo")
    with rows_read(lib) as seen:
        both = graders_with_results(lib, run.id)
    assert len(seen) == 1, seen  # it read the row again for each grader
    assert [g for g, _ in both] == run_graders(lib, run.id)
    for grader, results in both:
        assert results == grader_results(lib, run.id, grader.key) and len(results) == 24


def test_the_rule_is_settled_for_each_tally_before_any_query(lib: Library) -> None:
    run = run_grader(lib, "geo-suite", "geo")
    reading, rule = read_settled(lib, run.id, 0.7)
    assert [(r.threshold, r.suffix) for r in rule.graders] == [(g.threshold, str(g.slot)) for g in reading.graders]
    for r in (*rule.graders, rule.overall):  # the rule's own SQL over each tally's columns
        s = r.suffix
        assert r.decision == decision_sql_text(f"status{s}", f"score{s}", f"details{s}", r.threshold)
        assert r.scored == scored_sql(f"status{s}", f"score{s}")
    assert (rule.overall.threshold, rule.overall.suffix) == (0.7, "")
    with pytest.raises(ThresholdNotFinite):
        settle([(0.5, "")], float("inf"))


def test_a_runs_spend_reads_each_graders_entry_as_stored(lib: Library) -> None:
    run = run_grader(lib, "geo-suite", "geo")
    row = lib.runs.raw(run.id)
    entries = stored_entries(row)
    assert sorted(entries) == [(g.slot, g.key) for g in run_graders(lib, run.id)]
    aggregates = json.loads(row.aggregates)
    first = aggregates[STORED_KEY]["graders"][0]
    # a teammate's edit: the slot written as 1.0, and a second entry for it after the first
    aggregates[STORED_KEY]["graders"] = [{**first, "slot": float(first["slot"])},
                                         {**first, "usage": [["other", 3, 10, 0, 0]]}]
    with lib.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == run.id).values(aggregates=json.dumps(aggregates)))
    entries = stored_entries(lib.runs.raw(run.id))
    assert entries[(first["slot"], first["key"])]["slot"] == float(first["slot"])  # the first, found as 1
    spent = run_spend(lib, run.id, [SpendOf(key=first["key"], slot=first["slot"], suite=True, dataset_id=row.dataset_id)])
    assert spent.graders == {first["key"]: {}}  # its stored usage: none (a built-in check)
