"""The grid's SQL: filters, sorts and pages over one run's results without loading them all."""

from __future__ import annotations

from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.store import Library
from studio.core.store.results_query import (
    ResultFilter,
    ResultQuery,
    histogram,
    load_ids,
    load_result,
    load_rows,
)


def scored_run(lib: Library) -> ResultQuery:
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("qa", [
        Sample(id=f"s{i}", messages=[Turn(role="user", content=f"question {i}")], completion=f"answer {i}")
        for i in range(6)])
    run = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, 6)
    lib.runs.write_results(run.id, [
        (i, f"s{i}", Outcome(status="error", error="endpoint unreachable") if i == 5
         else Outcome(status="ok", score=i / 4, rationale=f"because {i}"))
        for i in range(6)])
    return ResultQuery(run_id=run.id, dataset_id=dataset.id)


def test_ids_follow_the_sort_and_the_filter(library: Library) -> None:
    query = scored_run(library)
    all_ids = list(load_ids(library.engine, query).ids)
    assert len(all_ids) == 6
    by_score = list(load_ids(library.engine, query.with_sort("score", True)).ids)
    rows = load_rows(library.engine, query.dataset_id, by_score)
    scores = [rows[i].score for i in by_score if rows[i].score is not None]
    assert scores == sorted(scores, reverse=True) == [1.0, 0.75, 0.5, 0.25, 0.0]
    errors = list(load_ids(library.engine, query.with_filter(ResultFilter(statuses=("error",)))).ids)
    assert len(errors) == 1 and rows[errors[0]].status == "error"
    middle = load_ids(library.engine, query.with_filter(ResultFilter(min_score=0.25, max_score=0.75))).ids
    assert sorted(rows[i].score for i in middle) == [0.25, 0.5, 0.75]
    assert ResultFilter().empty and not ResultFilter(text="x").empty


def test_one_result_in_full_and_the_histogram(library: Library) -> None:
    query = scored_run(library)
    first = list(load_ids(library.engine, query).ids)[0]
    detail = load_result(library.engine, query.dataset_id, first)
    assert detail is not None and detail["rationale"] == "because 0"
    assert load_result(library.engine, query.dataset_id, 10_000) is None
    counts, low, high = histogram(library.engine, query.run_id, bins=4)
    assert sum(counts) == 5 and (low, high) == (0.0, 1.0)  # the error has no score: not a zero
