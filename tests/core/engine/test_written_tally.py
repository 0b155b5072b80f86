"""The tallies the runner's writer keeps as it writes (engine/written_tally.py) are the ones the
stored rows add up to in SQL (store/run_graders), field by field: over random mixes of rows (every
status, a judge's verdict PASS or FAIL in the details, no score, tokens, cached, durations, several
thresholds, a suite with per-grader thresholds, plain-score batches and assembled ones, samples cut
short and finished later) and over real runs. They are used only when this process wrote every row
exactly once: a resumed run, a run with a second writer and a run whose results were there before
are computed from the stored rows, as before. On SQLite and PostgreSQL.

Floats: the kept sums add in write order, SQL in its scan order: equal to a relative 1e-12 (counts,
minima, maxima and token sums exactly)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import add_endpoint, cancelled_after, qa

from studio.core.engine.plan import RunPlan, assemble
from studio.core.engine.planning import plan_of
from studio.core.engine.runner import Progress, RunOptions, execute_run, run_grader, start_run
from studio.core.engine.summary import run_aggregates
from studio.core.engine.written_tally import WrittenTallies
from studio.core.models import BinaryJudge, BuiltinGrader, FunctionGrader, Outcome
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library, run_end
from studio.core.store.run_graders import (
    STORED_KEY,
    Tally,
    computed_tallies,
    grader_tallies,
    overall_tally,
    rows_sql,
    run_graders,
    stored_tallies,
    tally,
)
from studio.core.store.runs import ok_row, outcome_values, scores_prefix

FLOATS = ("score_sum", "score_sumsq", "duration_ms")

SHORT = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    text = thread.completion() or ""
    if text.startswith("boom"):
        raise ValueError("boom")
    return 1.0 if len(text) < 8 else 0.25
"""


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


@pytest.fixture
def lib(library: Library, fake_judge) -> Library:  # type: ignore[no-untyped-def]
    add_endpoint(library, fake_judge)
    for key, function in (("exact", "exact_match"), ("has", "contains"), ("starts", "starts_with"),
                          ("ends", "ends_with"), ("printable", "ascii_printable_only")):
        library.graders.create(BuiltinGrader(key=key, function=function))
    library.graders.create(FunctionGrader(key="short", source=SHORT))
    library.graders.create(BinaryJudge(key="capital", criteria="Names the right capital.", endpoint="fake"))
    answers = ["Paris", "Lyon, surely", "A joke [[judge:NA]]", "boom Paris", "Paris", "Marseille"]
    library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", answers[i % 6], "Paris") for i in range(60)])
    library.datasets.create("big", [qa(f"s{i}", "q", f"answer {i}", f"answer {i - i % 7 // 6}")
                                    for i in range(3000)])
    return library


def same(kept: Tally, computed: Tally) -> None:
    assert kept.model_dump(exclude=set(FLOATS)) == computed.model_dump(exclude=set(FLOATS))
    for name in FLOATS:
        assert getattr(kept, name) == pytest.approx(getattr(computed, name), rel=1e-12, abs=1e-9), name


def same_aggregates(kept: dict[str, Any], computed: dict[str, Any]) -> None:
    assert set(kept) == set(computed)
    for key, value in computed.items():
        if key == "metrics":
            assert set(kept[key]) == set(value)
            for metric, mean in value.items():
                assert kept[key][metric] == pytest.approx(mean, rel=1e-12), metric
        elif isinstance(value, float):
            assert kept[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
        else:
            assert kept[key] == value, key


def check_against_sql(lib: Library, run_id: int, kept: WrittenTallies, threshold: float) -> None:
    """Every tally kept equals the stored rows' computed one, and so do the aggregates read from it."""
    from studio.core.store.run_graders import written_counts

    graders = run_graders(lib, run_id)
    assert kept.usable(graders, threshold, written_counts(lib, run_id)), kept.untrusted
    tallies, overall = kept.tallies()
    computed = computed_tallies(lib, lib.runs.raw(run_id), graders)
    for mine, theirs in zip(tallies, computed, strict=True):
        same(mine, theirs)
    same(overall, tally(lib, rows_sql(False), (run_id,), threshold))
    same_aggregates(run_aggregates(lib, run_id, threshold, tally=overall, metric_sums=kept.metric_sums(),
                                        panels=kept.panels()),
                    run_aggregates(lib, run_id, threshold))


# -- random rows ---------------------------------------------------------------------------------
def random_outcome(rng: random.Random, key: str, threshold: float) -> Outcome | float:
    """Any result a scorer may give; a float is a plain score (a suite's ``score_values`` lane)."""
    kind = rng.random()
    score = rng.choice([threshold, 0.0, 1.0, rng.random(), rng.uniform(-3, 3)])
    tokens = {"prompt_tokens": rng.randrange(0, 5000), "completion_tokens": rng.randrange(0, 300),
              "cached_tokens": rng.randrange(0, 100), "cached": rng.random() < 0.3} if rng.random() < 0.4 else {}
    duration = rng.choice([0.0, rng.uniform(0, 2000)])
    if kind < 0.35:
        return score
    if kind < 0.45:
        return Outcome(score=score, scores={key: score}, duration_ms=duration)
    if kind < 0.55:
        return Outcome(score=score, scores={key: score, "other": rng.random()}, duration_ms=duration, **tokens)
    if kind < 0.65:  # a judge's own verdict, whatever its score says
        verdict = rng.choice(["PASS", "FAIL", "maybe"])
        return Outcome(score=rng.choice([score, None]), scores={key: score}, duration_ms=duration,
                       details={"verdict": verdict, "endpoint": "fake"}, rationale="why", **tokens)
    if kind < 0.72:
        return Outcome(score=None, duration_ms=duration, **tokens)  # ok without a score: NA
    if kind < 0.8:
        return Outcome.failure("boom", duration_ms=duration)
    if kind < 0.88:
        return Outcome(status="invalid", score=0.0, scores={key: 0.0}, raw="text", duration_ms=duration)
    return Outcome(status="skipped", rationale="NA", details={"verdict": "NA"}, duration_ms=duration, **tokens)


def single_rows(rng: random.Random, run_id: int, start: int, size: int, threshold: float) -> list[tuple[Any, ...]]:
    if rng.random() < 0.4:  # a batch of plain scores (the built-in and sandbox hot path)
        prefix = scores_prefix("score")
        return [ok_row(run_id, i, f"s{i}", prefix, rng.choice([threshold, rng.random()]), rng.uniform(0, 1))
                for i in range(start, start + size)]
    rows = []
    for i in range(start, start + size):
        outcome = random_outcome(rng, "score", threshold)
        if isinstance(outcome, float):
            outcome = Outcome.scored(outcome, {"score": outcome}, duration_ms=rng.uniform(0, 3))
        rows.append(outcome_values(run_id, i, f"s{i}", outcome))
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_of_one_grader_kept_as_written_is_the_sql_tally(lib: Library, seed: int) -> None:
    rng = random.Random(seed)
    threshold = rng.choice([0.3, 0.5, 0.75])
    run = start_run(lib, "exact", "big", RunOptions(pass_threshold=threshold))
    plan = plan_of(lib, lib.runs.get(run.id), threshold)
    kept = WrittenTallies(plan)
    start = 0
    while start < 1500:
        size = rng.randrange(1, 200)
        rows = single_rows(rng, run.id, start, size, threshold)
        lib.runs.write_rows(rows)
        kept.add(rows, [])
        start += size
    check_against_sql(lib, run.id, kept, threshold)


def suite_batches(rng: random.Random, plan: RunPlan, run_id: int, n: int) -> list[tuple[list[Any], list[Any], Any]]:
    """Batches as the runner's suite lanes give them: all plain scores (``plain_rows``, with the
    floats), or assembled (any outcome; some samples cut short, their other graders in a later batch)."""
    out = []
    partial: dict[int, dict[int, Any]] = {}
    cut: list[tuple[tuple[Any, ...], list[int]]] = []  # samples some graders did not finish, and those
    start = 0
    while start < n:
        size = rng.randrange(1, 120)
        batch = [(i, f"s{i}", "{}") for i in range(start, min(n, start + size))]
        start += size
        if rng.random() < 0.35:
            columns = [[rng.choice([plan.threshold(p), rng.random(), 1.0]) for _ in batch] for p in plan.graders]
            rows = plan.plain_rows(run_id, batch, columns)
            assert rows is not None
            out.append((rows, [], columns))
            continue
        graded = []
        later: dict[int, list[int]] = {}
        for p in plan.graders:
            positions = [k for k in range(len(batch)) if rng.random() > 0.05]
            for k in set(range(len(batch))) - set(positions):
                later.setdefault(k, []).append(p.slot)
            graded.append((p.slot, positions, [random_outcome(rng, p.key, plan.threshold(p)) for _ in positions]))
        rows, grader_rows = assemble(plan, run_id, batch, graded, partial, False)
        out.append((rows, grader_rows, None))
        cut += [(batch[k], slots) for k, slots in later.items()]
        if cut and rng.random() < 0.5:  # finish some samples cut short before
            finish, cut = cut[:3], cut[3:]
            graded = [(p.slot, [k for k, (_, slots) in enumerate(finish) if p.slot in slots],
                       [random_outcome(rng, p.key, plan.threshold(p)) for _, slots in finish if p.slot in slots])
                      for p in plan.graders]
            rows, grader_rows = assemble(plan, run_id, [row for row, _ in finish], graded, partial, False)
            out.append((rows, grader_rows, None))
    return out


@pytest.mark.parametrize(("seed", "overall"), [(1, "mean"), (2, "none"), (3, "all-pass"), (4, "mean")])
def test_a_suite_kept_as_written_is_the_sql_tally(lib: Library, seed: int, overall: str) -> None:
    rng = random.Random(seed)
    threshold = rng.choice([0.3, 0.5, 0.75])
    lib.suites.create(SuiteDefinition(key="mix", overall=overall, graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="has", weight=2.0, threshold=0.9),
        SuiteMember(grader="starts", threshold=0.25), SuiteMember(grader="capital")]))
    run = start_run(lib, "mix", "big", RunOptions(pass_threshold=threshold))
    plan = plan_of(lib, lib.runs.get(run.id), threshold)
    kept = WrittenTallies(plan)
    for rows, grader_rows, columns in suite_batches(rng, plan, run.id, 1200):
        lib.runs.write_rows(rows, grader_rows)
        kept.add(rows, grader_rows, columns)
    assert kept.orphans or lib.runs.partial(run.id) == {}  # samples cut short and never finished are orphans
    check_against_sql(lib, run.id, kept, threshold)


def test_rows_written_twice_or_by_another_writer_are_told(lib: Library) -> None:
    """The check at the end: a sample this writer wrote twice (the second replaced the first), a
    row it never saw, a row it saw removed."""
    from studio.core.store.run_graders import written_counts

    prefix = scores_prefix("score")
    cases = {"twice": ([ok_row(0, 3, "s3", prefix, 0.9, 1.0)], True),
             "other": ([ok_row(0, 11, "s11", prefix, 0.9, 1.0)], False), "removed": ([], False)}
    for name, (changed, seen) in cases.items():
        run = start_run(lib, "exact", "big")
        plan = plan_of(lib, lib.runs.get(run.id), 0.5)
        graders = run_graders(lib, run.id)
        rows = [ok_row(run.id, i, f"s{i}", prefix, i / 10, 1.0) for i in range(10)]
        kept = WrittenTallies(plan)
        lib.runs.write_rows(rows)
        kept.add(rows, [])
        assert kept.usable(graders, 0.5, written_counts(lib, run.id))
        changed = [(run.id, *row[1:]) for row in changed]
        lib.runs.write_rows(changed)
        if seen:
            kept.add(changed, [])
        if name == "removed":
            with lib.engine.begin() as conn:
                conn.exec_driver_sql("DELETE FROM results WHERE run_id = ? AND sample_idx = 4", (run.id,))
        assert not kept.usable(graders, 0.5, written_counts(lib, run.id)), name
        assert kept.untrusted is not None and "stored rows" in kept.untrusted
    fresh = WrittenTallies(plan)
    assert not fresh.usable(graders, 0.25, (0, 0, 0, 0))  # asked at another threshold
    odd = WrittenTallies(plan)
    odd.add([(*outcome_values(run.id, 20, "s20", Outcome(score=0.5))[:4], "0.5",
              *outcome_values(run.id, 20, "s20", Outcome(score=0.5))[5:])], [])
    assert odd.untrusted is not None  # a value the store may not keep as it is (text for a score)
    nan = WrittenTallies(plan)  # a score that is not a number is no score, in SQL as here (store/ledger.py)
    nan.add([outcome_values(run.id, 20, "s20", Outcome(score=float("nan")))], [])
    assert nan.untrusted is None


# -- real runs -----------------------------------------------------------------------------------
@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The runs whose end computed their tallies from the stored rows (``stored_tallies``)."""
    computed: list[int] = []

    def counting(library: Library, run_id: int, threshold: float, *read: Any) -> Any:
        computed.append(run_id)
        return stored_tallies(library, run_id, threshold, *read)

    monkeypatch.setattr(run_end, "stored_tallies", counting)  # the store's answer at a run's end
    return computed


def stored_equals_computed(lib: Library, run_id: int) -> None:
    aggregates = json.loads(lib.runs.raw(run_id).aggregates)
    stored = aggregates[STORED_KEY]
    graders = run_graders(lib, run_id)
    threshold = lib.runs.get(run_id).pass_threshold
    computed = computed_tallies(lib, lib.runs.raw(run_id), graders)
    assert grader_tallies(lib, run_id, graders) == [Tally.model_validate(e["tally"]) for e in stored["graders"]]
    for entry, theirs in zip(stored["graders"], computed, strict=True):
        same(Tally.model_validate(entry["tally"]), theirs)
    same(overall_tally(lib, run_id), tally(lib, rows_sql(False), (run_id,), threshold))
    run = lib.runs.get(run_id)
    same_aggregates({k: v for k, v in run.aggregates.items() if k not in ("batch_metrics", "executor", "budget")},
                    run_aggregates(lib, run_id, threshold))
    from studio.core.engine.usage import endpoint_rows

    row = lib.runs.raw(run_id)
    for entry in stored["graders"]:  # each grader's usage as its rows say it
        counted = entry["tally"]
        assert entry["usage"] == endpoint_rows(lib, run_id, bool(row.suite), entry["slot"], entry["key"],
                                               row.dataset_id, counted["prompt_tokens"] + counted["completion_tokens"])


@pytest.mark.parametrize("grading", ["exact", "five", "capital", "short", "geo-suite"])
def test_a_fresh_run_stores_its_kept_tallies_and_they_are_the_computed_ones(
        lib: Library, paths: list[int], grading: str) -> None:
    lib.suites.create(SuiteDefinition(key="five", overall="mean", graders=[
        SuiteMember(grader=k) for k in ("exact", "has", "starts", "ends", "printable")]))
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="all-pass", graders=[
        SuiteMember(grader="exact", threshold=0.9), SuiteMember(grader="short", weight=2.0, threshold=0.3),
        SuiteMember(grader="capital")]))
    run = run_grader(lib, grading, "big" if grading in ("exact", "five") else "geo",
                     RunOptions(pass_threshold=0.75))
    assert run.status == "completed"
    assert paths == []  # kept, not computed
    stored_equals_computed(lib, run.id)


def test_a_resumed_run_computes_its_tallies(lib: Library, paths: list[int], fake_judge) -> None:  # type: ignore[no-untyped-def]
    fake_judge.latency = 20 / 1000
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="capital", threshold=0.9)]))
    lib.datasets.create("geo-big", [qa(f"s{i}", "Capital of France?", ["Paris", "Lyon"][i % 2], "Paris")
                                    for i in range(200)])
    run = start_run(lib, "geo-suite", "geo-big", RunOptions(use_cache=False, concurrency=2))
    first = cancelled_after(lib, run.id, 4)
    assert first.status == "cancelled" and 0 < first.done < 200
    # a cancelled run keeps no tallies; its aggregates, kept, are the computed ones
    assert STORED_KEY not in json.loads(lib.runs.raw(run.id).aggregates) and paths == []
    same_aggregates({k: v for k, v in first.aggregates.items() if k != "batch_metrics"},
                    run_aggregates(lib, run.id, first.pass_threshold))
    fake_judge.latency = 0.0  # the slow judge was there for the cancel to land mid-run; the resume needs none
    final = execute_run(lib, run.id)
    assert final.status == "completed" and final.done == 200
    assert paths == [run.id]  # the resume did not write every row: computed
    stored_equals_computed(lib, run.id)


def test_a_run_with_a_second_writer_computes_its_tallies(lib: Library, paths: list[int]) -> None:
    """A row another writer stores while the run goes on, of a sample the run does not grade: the
    end counts the stored rows, finds them not the ones written, and computes."""
    run = start_run(lib, "exact", "big", RunOptions(limit=2500))
    written: list[int] = []

    def on_progress(progress: Progress) -> None:
        if not written and progress.done:
            lib.runs.write_results(run.id, [(2999, "s2999", Outcome(status="error", error="other writer"))])
            written.append(run.id)

    final = execute_run(lib, run.id, on_progress=on_progress)
    assert final.status == "completed" and written and final.done == 2501
    assert paths == [run.id]
    stored_equals_computed(lib, run.id)


def test_a_run_whose_results_were_there_before_computes(lib: Library, paths: list[int]) -> None:
    lib.suites.create(SuiteDefinition(key="two", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="has")]))
    run = start_run(lib, "two", "geo")
    from studio.core.store.runs import grader_values

    lib.runs.write_rows([], [grader_values(run.id, 0, 7, Outcome(score=0.5, scores={"score": 0.5}))])
    final = execute_run(lib, run.id)
    assert final.status == "completed" and paths == [run.id]
    stored_equals_computed(lib, run.id)
