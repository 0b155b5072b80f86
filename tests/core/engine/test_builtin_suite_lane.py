"""A suite of built-in checks (the text lane: completion and expected columns, no JSON parsed, one
pass shared by every check) stores, for every sample and grader, the score and pass/fail its
single-grader run stores, and both equal the one-sample path's (``score_sample``); so do the
summaries (engine/summary.py's one summary over store/run_graders.tally). On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.engine.runner import execute_run, run_grader, start_run
from studio.core.engine.sections import load_run
from studio.core.engine.summary import run_aggregates
from studio.core.graders.builtin import score_sample
from studio.core.models import BuiltinGrader, BuiltinOptions, Sample, Turn
from studio.core.models.pass_rule import decide_outcome
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.run_graders import grader_results

GRADERS = [
    BuiltinGrader(key="exact", function="exact_match"),
    BuiltinGrader(key="has", function="contains"),
    BuiltinGrader(key="starts", function="starts_with", options=BuiltinOptions(negate=True)),
    BuiltinGrader(key="ends", function="ends_with", options=BuiltinOptions(empty_reference_zero=False)),
    BuiltinGrader(key="printable", function="ascii_printable_only"),
    BuiltinGrader(key="f1", function="token_f1"),  # no text lane: the suite then reads JSON for all
]


def samples() -> list[Sample]:
    out = []
    for i in range(257):
        answer, expected = f"answer {i}", f"answer {i - i % 7 // 6}"
        if i % 11 == 0:
            answer = ""  # an empty submission: Letta's early zero (an Outcome with a rationale)
        if i % 13 == 0:
            expected = None  # no ground truth
        if i % 17 == 0:
            answer = f"caf\u00e9 {i}"
        out.append(Sample(id=f"s{i}", completion=answer, expected=expected))
    # the answer in the messages, not a completion: read from the sample's JSON
    out[3] = Sample(id="s3", messages=[Turn(role="user", content="q"), Turn(role="assistant", content="answer 3")],
                    expected="answer 3")
    return out


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


@pytest.fixture
def lib(library: Library) -> Library:
    for grader in GRADERS:
        library.graders.create(grader)
    library.datasets.create("d", samples())
    return library


def stored(lib: Library, run_id: int, key: str) -> list[tuple]:  # type: ignore[type-arg]
    return [(r["sample_idx"], r["status"], r["score"], r["rationale"], r["error"])
            for r in grader_results(lib, run_id, key)]


@pytest.mark.parametrize("members", [GRADERS[:5], GRADERS], ids=["built-ins", "with-token_f1"])
def test_suite_scores_equal_single_runs_and_the_one_sample_path(lib: Library, members: list[BuiltinGrader]) -> None:
    lib.suites.create(SuiteDefinition(key="s", overall="mean", graders=[SuiteMember(grader=g.key) for g in members]))
    suite = run_grader(lib, "s", "d")
    assert suite.status == "completed" and suite.done == 257
    by_sample = samples()
    summaries = {s.key: s for s in load_run(lib, suite.id).summaries}
    for grader in members:
        single = run_grader(lib, grader.key, "d")
        assert stored(lib, suite.id, grader.key) == stored(lib, single.id, grader.key), grader.key
        one = [score_sample(grader, sample) for sample in by_sample]
        assert [(r[1], r[2], r[3], r[4]) for r in stored(lib, single.id, grader.key)] == \
            [(o.status, o.score, o.rationale, o.error) for o in one], grader.key
        decisions = [decide_outcome(o, 0.5) for o in one]
        single_summary = load_run(lib, single.id).summaries[0]
        for name in ("pass", "fail", "na", "error"):
            assert summaries[grader.key].decisions[name] == single_summary.decisions[name] == decisions.count(name)
        assert summaries[grader.key].mean == single_summary.mean
    for row in lib.runs.results(suite.id):  # every plain score under its key, the mean of them
        plain = {k: v for k, v in row["scores"].items()}
        assert row["score"] == pytest.approx(sum(plain.values()) / len(plain))


@pytest.mark.parametrize("target", ["exact", "s"])
def test_a_resumed_text_lane_run_grades_each_missing_sample_once(lib: Library, target: str) -> None:
    """As after a kill: some finished rows are there, others not; the resume grades exactly the
    missing samples (the text lane skips the stored ones) and the run ends as a fresh one."""
    lib.suites.create(SuiteDefinition(key="s", overall="mean", graders=[SuiteMember(grader=g.key) for g in GRADERS[:5]]))
    fresh = run_grader(lib, target, "d")
    run = start_run(lib, target, "d")
    execute_run(lib, run.id)
    missing = {0, 1, 2, 3, 50, 51, 128, 200, 255, 256}
    with lib.engine.begin() as conn:
        for idx in missing:
            conn.exec_driver_sql("DELETE FROM results WHERE run_id = ? AND sample_idx = ?", (run.id, idx))
        conn.exec_driver_sql("UPDATE runs SET status = 'cancelled' WHERE id = ?", (run.id,))
    written: list[int] = []
    resumed = execute_run(lib, run.id, on_progress=lambda p: written.extend(p.written_indices()))
    assert resumed.status == "completed" and resumed.done == 257
    assert sorted(written) == sorted(missing)  # each missing sample once, nothing else

    def rows(run_id: int) -> list[tuple]:  # type: ignore[type-arg]
        return [(r["sample_idx"], r["sample_id"], r["status"], r["score"], r["scores"], r["rationale"])
                for r in lib.runs.results(run_id)]

    assert rows(resumed.id) == rows(fresh.id)


def test_the_one_pass_tally_of_a_suite_equals_each_graders_own(lib: Library) -> None:
    """``grader_tallies`` (one SELECT for every grader of a suite run) gives each grader's
    ``grader_tally``, grader rows and samples whose row is missing (a kill) included."""
    from studio.core.store.run_graders import grader_tallies, grader_tally, run_graders

    lib.suites.create(SuiteDefinition(key="s", overall="mean", graders=[
        SuiteMember(grader=g.key, threshold=0.9 if g.key == "f1" else None) for g in GRADERS]))
    run = run_grader(lib, "s", "d")
    with lib.engine.begin() as conn:  # samples with grader rows (early zeros) left without their sample row
        conn.exec_driver_sql("DELETE FROM results WHERE run_id = ? AND sample_idx IN (0, 11, 22, 40)", (run.id,))
        # a killed run: not completed, so its tallies are computed (a completed one reads them stored)
        conn.exec_driver_sql("UPDATE runs SET status = 'running' WHERE id = ?", (run.id,))
    graders = run_graders(lib, run.id)
    together = grader_tallies(lib, run.id, graders)
    alone = [grader_tally(lib, run.id, g) for g in graders]
    assert len({t.total for t in alone}) > 1 and max(t.total for t in alone) > 253  # grader rows alone counted
    for one, other in zip(together, alone, strict=True):
        assert one.model_dump(exclude={"score_sum", "score_sumsq"}) == other.model_dump(exclude={"score_sum", "score_sumsq"})
        assert one.score_sum == pytest.approx(other.score_sum) and one.score_sumsq == pytest.approx(other.score_sumsq)


def test_a_suite_runs_metrics_are_the_means_of_every_key_of_its_scores(lib: Library) -> None:
    """runs.aggregates reads a suite run's metrics a key at a time (json_extract of its graders'
    keys): the same means as splitting every row's scores (json_each)."""
    lib.suites.create(SuiteDefinition(key="s", overall="mean", graders=[SuiteMember(grader=g.key) for g in GRADERS]))
    run = run_grader(lib, "s", "d")
    with lib.engine.connect() as conn:
        split = dict(conn.exec_driver_sql(
            "SELECT j.key, avg(CAST(j.value AS DOUBLE PRECISION)) FROM results, json_each(results.scores) AS j"
            " WHERE results.run_id = ? AND results.scores IS NOT NULL AND results.status IN ('ok','invalid')"
            " GROUP BY j.key", (run.id,)).all())
    metrics = run_aggregates(lib, run.id)["metrics"]
    assert list(metrics) == sorted(split) and len(metrics) == len(GRADERS)
    assert metrics == pytest.approx(split)
