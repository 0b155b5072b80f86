"""The grid's SQL: filters, sorts and pages over one run's results without loading them all."""

from __future__ import annotations

import json
import math
import tracemalloc

import pytest

from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.store import Library
from studio.core.store.results_query import (
    ResultFilter,
    ResultQuery,
    histogram,
    id_array,
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


@pytest.mark.parametrize("slice_chars", [1, 7, 4096, 1 << 18])
def test_the_id_array_is_parsed_a_slice_at_a_time_whatever_the_cut(monkeypatch: pytest.MonkeyPatch,
                                                                     slice_chars: int) -> None:
    import studio.core.store.results_query as results_query
    monkeypatch.setattr(results_query, "ID_SLICE_CHARS", slice_chars)
    ids = [7, -3, 10**15, 0, *range(1_000, 1_300), 2**63 - 1]
    for text in (json.dumps(ids), json.dumps(ids, separators=(",", ":")), "[" + " , ".join(map(str, ids)) + " ]"):
        assert id_array(text).tolist() == ids
    assert id_array("[]").tolist() == [] and id_array("[ ]").tolist() == [] and id_array("[5]").tolist() == [5]


def test_a_big_id_array_costs_the_array_not_a_list_of_every_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A million ids as Python ints in one list is ~40 MB beside the 8 MB array: the window's peak."""
    import studio.core.store.results_query as results_query
    monkeypatch.setattr(results_query, "ID_SLICE_CHARS", 4096)
    n = 200_000
    text = json.dumps(list(range(10**6, 10**6 + n)), separators=(",", ":"))
    tracemalloc.start()
    try:
        ids = id_array(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(ids) == n and ids[0] == 10**6 and ids[-1] == 10**6 + n - 1
    # the array (8 bytes an id, over-allocated as it grows) and one slice; a list of every id
    # would add 8 bytes of pointer and 32 of int an id
    assert peak < 2 * 8 * n


def test_the_histogram_of_huge_and_non_finite_scores(library: Library) -> None:
    """A teammate's scores of ±1e308 (their range past the largest double: PostgreSQL failed the
    bucket's ``score - low``, "value out of range: overflow"), the smallest double, and ±inf and NaN
    (no score: never a bucket's edge) count in the histogram's buckets, on both backends."""
    query = scored_run(library)
    scores = [-1e308, 1e308, 5e-324, 0.0, 1.0, -math.inf, math.inf, math.nan]
    library.runs.write_results(query.run_id, [(10 + i, f"h{i}", Outcome(status="ok", score=s))
                                              for i, s in enumerate(scores)])
    counts, low, high = histogram(library.engine, query.run_id, bins=4)
    assert (low, high) == (-1e308, 1e308)
    # finite scores only: the five of scored_run (0 to 1) and 5e-324, 0, 1 in the bucket from 0
    assert counts == [1, 0, 8, 1]
