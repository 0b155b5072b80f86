"""A completed run's tallies, stored once at its end (store/run_graders ``STORED_KEY``), are the
tallies its results add up to: for a run of one grader and for a suite (a check, a function grader
that errors, a judge that says PASS, FAIL and NA with a rationale), field by field; a resumed run
stores the same as a run made in one go; a run stored without them (a library written before) or
asked at another threshold computes; and only a completed run reads them. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_helpers import add_endpoint, cancelled_after, qa

from studio.core.engine.runner import RunOptions, execute_run, run_grader, start_run
from studio.core.engine.sections import load_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BinaryJudge, BuiltinGrader, FunctionGrader
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.run_graders import (
    STORED_KEY,
    RunGrader,
    Tally,
    computed_tallies,
    grader_tallies,
    overall_tally,
    rows_sql,
    run_graders,
    tally,
)

SHORT = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    text = thread.completion() or ""
    if text.startswith("boom"):
        raise ValueError("boom")
    return 1.0 if len(text) < 8 else 0.25
"""


def dataset(n: int) -> list:  # type: ignore[type-arg]
    answers = ["Paris", "Lyon, surely", "A joke [[judge:NA]]", "boom Paris", "Paris", "Marseille"]
    return [qa(f"s{i}", "Capital of France?", answers[i % len(answers)], "Paris") for i in range(n)]


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


@pytest.fixture
def lib(library: Library, fake_judge) -> Library:  # type: ignore[no-untyped-def]
    add_endpoint(library, fake_judge)
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(FunctionGrader(key="short", source=SHORT))
    library.graders.create(BinaryJudge(key="capital", criteria="Names the right capital.", endpoint="fake"))
    library.datasets.create("geo", dataset(60))
    library.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="short", weight=2.0, threshold=0.9),
        SuiteMember(grader="capital")]))
    return library


def stored_of(lib: Library, run_id: int) -> dict:  # type: ignore[type-arg]
    aggregates = json.loads(lib.runs.raw(run_id).aggregates)
    return aggregates[STORED_KEY]  # type: ignore[no-any-return]


def computed(lib: Library, run_id: int) -> tuple[list[RunGrader], list[Tally], Tally]:
    row = lib.runs.raw(run_id)
    graders = run_graders(lib, run_id)
    threshold = lib.runs.get(run_id).pass_threshold
    return graders, computed_tallies(lib, row, graders), tally(lib, rows_sql(False), (run_id,), threshold)


def same(one: Tally, other: Tally, timed: bool = True) -> None:
    """Field by field; the sums of floats may differ in their last bit by the order rows are added.
    ``timed``: compare the time graded and the prompt tokens the endpoint served from its cache too
    (not between two runs: each took its own time, and the second found the first's prompts cached)."""
    floats = {"score_sum", "score_sumsq", "duration_ms"}
    unlike = floats if timed else floats | {"cached_tokens"}
    assert one.model_dump(exclude=unlike) == other.model_dump(exclude=unlike)
    for name in sorted(floats if timed else floats - {"duration_ms"}):
        assert getattr(one, name) == pytest.approx(getattr(other, name), rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("grading", ["capital", "short", "geo-suite"])
def test_the_stored_tallies_are_the_computed_ones(lib: Library, grading: str) -> None:
    run = run_grader(lib, grading, "geo")
    assert run.status == "completed" and run.done == 60
    assert STORED_KEY not in run.aggregates  # no figure of the run: never shown
    graders, tallies, overall = computed(lib, run.id)
    read = grader_tallies(lib, run.id, graders)
    stored = stored_of(lib, run.id)
    assert [(e["slot"], e["key"], e["threshold"]) for e in stored["graders"]] == \
        [(g.slot, g.key, g.threshold) for g in graders]
    for mine, theirs, entry in zip(read, tallies, stored["graders"], strict=True):
        assert mine == Tally.model_validate(entry["tally"])  # what is read is what was stored
        same(mine, theirs)
    same(overall_tally(lib, run.id), overall)
    statuses = {k for t in tallies for k, v in t.statuses.items() if v}
    decisions = {k for t in tallies for k, v in t.decisions.items() if v}
    if grading != "short":  # the judge: pass, fail, NA (skipped)
        assert {"pass", "fail", "na"} <= decisions and "skipped" in statuses
    if grading != "capital":  # the function grader raises on "boom"
        assert "error" in statuses and "error" in decisions
    # the run's aggregates, read from its results rows' tally, are the ones computed in SQL
    again = run_aggregates(lib, run.id, run.pass_threshold)
    for key, value in again.items():
        if isinstance(value, float):
            assert run.aggregates[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert run.aggregates[key] == value, key


def test_a_resumed_run_stores_what_a_run_in_one_go_stores(lib: Library, fake_judge) -> None:  # type: ignore[no-untyped-def]
    lib.datasets.create("geo-big", dataset(200))
    whole = run_grader(lib, "geo-suite", "geo-big", RunOptions(use_cache=False))
    fake_judge.latency = 20 / 1000  # slow enough for the cancel below to land mid-run
    run = start_run(lib, "geo-suite", "geo-big", RunOptions(use_cache=False, concurrency=2))
    first = cancelled_after(lib, run.id, 4)
    assert first.status == "cancelled" and 0 < first.done < 200
    assert STORED_KEY not in json.loads(lib.runs.raw(run.id).aggregates)  # only a completed run keeps one
    fake_judge.latency = 0.0  # the slow judge was there for the cancel to land mid-run; the resume needs none
    final = execute_run(lib, run.id)
    assert final.status == "completed" and final.done == 200
    resumed, once = stored_of(lib, run.id), stored_of(lib, whole.id)
    for a, b in zip(resumed["graders"], once["graders"], strict=True):
        assert (a["slot"], a["key"], a["threshold"]) == (b["slot"], b["key"], b["threshold"])
        same(Tally.model_validate(a["tally"]), Tally.model_validate(b["tally"]), timed=False)
    same(Tally.model_validate(resumed["overall"]["tally"]), Tally.model_validate(once["overall"]["tally"]), timed=False)
    _, tallies, _ = computed(lib, run.id)
    for entry, theirs in zip(resumed["graders"], tallies, strict=True):
        same(Tally.model_validate(entry["tally"]), theirs)


def forge(lib: Library, run_id: int, change: dict) -> None:  # type: ignore[type-arg]
    """Rewrite the run's stored tallies (``change`` merged into each entry's tally)."""
    aggregates = json.loads(lib.runs.raw(run_id).aggregates)
    for entry in [*aggregates[STORED_KEY]["graders"], aggregates[STORED_KEY]["overall"]]:
        entry["tally"].update(change)
    with lib.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE runs SET aggregates = ? WHERE id = ?", (json.dumps(aggregates), run_id))


def test_only_a_completed_run_at_the_stored_threshold_reads_its_stored_tallies(lib: Library) -> None:
    """A forged stored tally shows which path a read took: a completed run reads it; the same
    run marked interrupted (being resumed), or a grader asked at another threshold, computes."""
    run = run_grader(lib, "geo-suite", "geo")
    graders, tallies, overall = computed(lib, run.id)
    forge(lib, run.id, {"total": 123456})
    assert [t.total for t in grader_tallies(lib, run.id, graders)] == [123456] * 3
    assert overall_tally(lib, run.id).total == 123456
    assert load_run(lib, run.id).sections[0].summary.total == 123456
    other = [g.model_copy(update={"threshold": 0.25}) for g in graders]
    assert [t.total for t in grader_tallies(lib, run.id, other)] == [t.total for t in tallies]
    for status in ("running", "cancelled", "stopped", "failed"):
        with lib.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE runs SET status = ? WHERE id = ?", (status, run.id))
        assert [t.total for t in grader_tallies(lib, run.id, graders)] == [t.total for t in tallies]
        assert overall_tally(lib, run.id).total == overall.total


def test_a_run_stored_before_tallies_were_kept_is_read_computed(lib: Library) -> None:
    """A library written before this release: its completed runs have no stored tallies."""
    for grading in ("capital", "geo-suite"):
        run = run_grader(lib, grading, "geo")
        before = load_run(lib, run.id)
        aggregates = json.loads(lib.runs.raw(run.id).aggregates)
        del aggregates[STORED_KEY]
        with lib.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE runs SET aggregates = ? WHERE id = ?", (json.dumps(aggregates), run.id))
        after = load_run(lib, run.id)
        assert after.info.status == "completed"
        for a, b in zip(after.summaries, before.summaries, strict=True):
            # float sums (the mean, the time graded) may differ in their last bit: the stored ones were
            # added up as the rows were written (engine/written_tally.py), these in SQL's scan order
            floats = {"mean", "mean_ci", "mean_duration_ms"}
            assert a.model_dump(exclude=floats) == b.model_dump(exclude=floats)
            assert a.mean == pytest.approx(b.mean, rel=1e-12)
            assert a.mean_duration_ms == pytest.approx(b.mean_duration_ms, rel=1e-12)
        assert (after.overall is None) == (before.overall is None)
        if after.overall is not None and before.overall is not None:
            assert after.overall.counts == before.overall.counts and after.overall.decisions == before.overall.decisions
