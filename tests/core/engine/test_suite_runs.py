"""A suite run: a built-in check, a sandboxed function grader and a judge (the scripted judge server)
over one dataset in one pass. Each grader's scores equal its single-grader run's, the overall score
follows the suite's rule (NA and errors never a 0), and a cancelled or killed run resumes per
sample and per grader, grading nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from judge_helpers import add_endpoint, cancelled_after, qa

from studio.core.engine.runner import RunOptions, execute_run, run_grader, start_run
from studio.core.engine.sections import load_run
from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    Component,
    CompositeGrader,
    FunctionGrader,
)
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.run_graders import grader_results, run_graders

REPO = Path(__file__).resolve().parents[3]

SHORT = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    text = thread.completion() or ""
    if text.startswith("boom"):
        raise ValueError("boom")
    return 1.0 if len(text) < 8 else 0.25
"""


def dataset(n: int) -> list:  # type: ignore[type-arg]
    out = []
    for i in range(n):
        answer = "Paris" if i % 3 else "Lyon, surely"
        out.append(qa(f"s{i}", "Capital of France?", answer, "Paris"))
    out[4] = qa("s4", "Tell me a joke", "A joke [[judge:NA]]", "x")  # the judge says NA
    out[5] = qa("s5", "Capital of France?", "boom Paris", "Paris")  # the function grader errors
    return out


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db


@pytest.fixture
def lib(library: Library, fake_judge) -> Library:  # type: ignore[no-untyped-def]
    add_endpoint(library, fake_judge)
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(FunctionGrader(key="short", source=SHORT))
    library.graders.create(BinaryJudge(key="capital", criteria="Names the right capital.", endpoint="fake"))
    library.datasets.create("geo", dataset(30))
    return library


def scores(rows: list[dict]) -> list[tuple]:  # type: ignore[type-arg]
    return [(r["sample_idx"], r["sample_id"], r["status"], r["score"]) for r in rows]


def test_each_grader_scores_as_its_single_run_and_the_overall_follows_the_rule(lib: Library) -> None:
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="short", weight=2.0), SuiteMember(grader="capital")]))
    run = run_grader(lib, "geo-suite", "geo")
    assert run.status == "completed" and run.done == 30 and run.suite and run.suite["key"] == "geo-suite"
    graders = run_graders(lib, run.id)
    assert [(g.key, g.version, g.weight) for g in graders] == [("exact", 1, 1.0), ("short", 1, 2.0), ("capital", 1, 1.0)]

    for key in ("exact", "short", "capital"):
        single = run_grader(lib, key, "geo")
        assert scores(grader_results(lib, run.id, key)) == scores(lib.runs.results(single.id)), key
        assert all(r["grader"] == key for r in grader_results(lib, run.id, key))

    judge = {r["sample_idx"]: r for r in grader_results(lib, run.id, "capital")}
    assert judge[4]["status"] == "skipped" and judge[1]["rationale"]  # a judge keeps its rationale
    per = {key: {r["sample_idx"]: r for r in grader_results(lib, run.id, key)} for key in ("exact", "short", "capital")}
    weights = {"exact": 1.0, "short": 2.0, "capital": 1.0}
    for row in lib.runs.results(run.id):
        idx = row["sample_idx"]
        if idx == 5:  # the function grader's error is the overall's error, not a 0
            assert row["status"] == "error" and row["score"] is None and "short" in row["error"]
            continue
        used = {k: per[k][idx]["score"] for k in weights if per[k][idx]["status"] in ("ok", "invalid")}
        expected = sum(weights[k] * s for k, s in used.items()) / sum(weights[k] for k in used)
        assert row["status"] == "ok" and row["score"] == pytest.approx(expected), idx
        assert row["scores"] == used  # every grader's score by key; the NA judge has none
    assert 4 in per["capital"] and "capital" not in lib.runs.results(run.id)[4]["scores"]

    summaries = {s.key: s for s in load_run(lib, run.id).summaries}
    assert summaries["capital"].counts == {"ok": 29, "error": 0, "invalid": 0, "na": 1}
    assert summaries["short"].counts["error"] == 1 and summaries["exact"].n == 30
    assert summaries["exact"].mean_ci is not None
    low, high = summaries["exact"].mean_ci
    assert low < summaries["exact"].mean < high
    assert list(summaries)[0] == "exact"


def test_all_pass_and_composite_rules(lib: Library) -> None:
    lib.suites.create(SuiteDefinition(key="strict", overall="all-pass", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="short", threshold=0.5)]))
    run = run_grader(lib, "strict", "geo")
    for row in lib.runs.results(run.id):
        if row["status"] == "error":
            continue
        assert row["score"] == (1.0 if all(v >= 0.5 for v in row["scores"].values()) else 0.0)

    lib.graders.create(CompositeGrader(key="best", mode="any", components=[
        Component(grader=BuiltinGrader(key="exact", function="exact_match")),
        Component(grader=BinaryJudge(key="capital", criteria="x", endpoint="fake"))]))
    lib.suites.create(SuiteDefinition(key="either", overall="composite", overall_grader="best", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="capital")]))
    run = run_grader(lib, "either", "geo")
    for row in lib.runs.results(run.id):
        assert row["score"] == max(row["scores"].values()), row


def test_a_one_off_suite_is_the_same_as_a_saved_one(lib: Library) -> None:
    run = run_grader(lib, None, "geo", RunOptions(graders=["exact", "capital"], overall="mean"))  # type: ignore[arg-type]
    assert run.suite and run.suite["key"] is None and run.suite["graders"] == ["exact", "capital"]
    assert [g.key for g in run_graders(lib, run.id)] == ["exact", "capital"]


def test_cancel_then_resume_grades_each_sample_and_grader_once(lib: Library, fake_judge) -> None:  # type: ignore[no-untyped-def]
    fake_judge.latency = 20 / 1000
    lib.datasets.create("geo-big", dataset(200))
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="capital")]))
    run = start_run(lib, "geo-suite", "geo-big", RunOptions(use_cache=False, concurrency=2))
    first = cancelled_after(lib, run.id, 4)
    assert first.status == "cancelled" and 0 < first.done < 200
    asked_before = fake_judge.requests["/v1/chat/completions"]
    judged = {r["sample_idx"] for r in grader_results(lib, run.id, "capital")}
    fake_judge.latency = 0.0  # the slow judge was there for the cancel to land mid-run; the resume needs none

    final = execute_run(lib, run.id)
    assert final.status == "completed" and final.done == 200
    assert fake_judge.requests["/v1/chat/completions"] - asked_before == 200 - len(judged)
    raw = lib.engine.raw_connection()  # the driver's own connection: SQLite's or PostgreSQL's
    assert raw.cursor().execute("SELECT count(*), count(DISTINCT sample_idx) FROM results WHERE run_id = ?",
                                (run.id,)).fetchone() == (200, 200)
    raw.close()
    single = run_grader(lib, "exact", "geo-big")
    assert scores(grader_results(lib, run.id, "exact")) == scores(lib.runs.results(single.id))


def test_resume_grades_only_the_graders_a_sample_is_missing(lib: Library, fake_judge) -> None:  # type: ignore[no-untyped-def]
    """Samples whose check finished but whose judge did not (a batch cut short): the resume asks the
    judge for them and leaves the stored check as it is (a score the check would never give proves it)."""
    from studio.core.models import Outcome
    from studio.core.store.runs import grader_values

    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="capital")]))
    run = start_run(lib, "geo-suite", "geo", RunOptions(use_cache=False))
    lib.runs.write_rows([], [grader_values(run.id, 0, idx, Outcome(score=0.123, scores={"score": 0.123}))
                             for idx in (1, 2, 3)])
    assert set(lib.runs.partial(run.id)) == {1, 2, 3}
    asked = fake_judge.requests["/v1/chat/completions"]
    final = execute_run(lib, run.id)
    assert final.done == 30 and lib.runs.partial(run.id) == {}
    assert fake_judge.requests["/v1/chat/completions"] - asked == 30  # the judge: every sample once
    exact = {r["sample_idx"]: r["score"] for r in grader_results(lib, run.id, "exact")}
    assert [exact[i] for i in (1, 2, 3)] == [0.123] * 3  # the check: not graded again
    rows = {r["sample_idx"]: r for r in lib.runs.results(run.id)}
    assert rows[1]["scores"]["exact"] == 0.123 and rows[1]["score"] == pytest.approx((0.123 + 1.0) / 2)


def test_kill_then_resume_from_the_command_line_grades_nothing_twice(lib: Library, fake_judge, db_path) -> None:  # type: ignore[no-untyped-def]
    fake_judge.latency = 60 / 1000
    lib.datasets.create("geo-big", dataset(120))
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="short"), SuiteMember(grader="capital")]))
    env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
    child = subprocess.Popen([sys.executable, "-m", "studio", "run", "geo-suite", "geo-big", "--no-cache",
                              "--concurrency", "2", "--json"], env=env, cwd=REPO,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    watching = Library.open(db_path)  # another connection, as another analyst's would be
    raw = watching.engine.raw_connection()
    con = raw.cursor()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        (n,) = con.execute("SELECT count(*) FROM results r JOIN runs ON runs.id = r.run_id "
                           "WHERE runs.suite IS NOT NULL").fetchone()
        if n >= 10:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    (run_id,) = con.execute("SELECT max(id) FROM runs").fetchone()
    before_rows = con.execute("SELECT sample_idx, status, score, scores, duration_ms FROM results WHERE run_id = ?"
                              " ORDER BY sample_idx", (run_id,)).fetchall()
    before_graders = con.execute("SELECT slot, sample_idx, status, score, duration_ms FROM grader_results"
                                 " WHERE run_id = ? ORDER BY slot, sample_idx", (run_id,)).fetchall()
    assert 10 <= len(before_rows) < 120
    assert lib.runs.get(run_id).status == "interrupted"
    judged = {idx for slot, idx, *_ in before_graders if slot == 2} | {r[0] for r in before_rows}
    asked = fake_judge.requests["/v1/chat/completions"]
    fake_judge.latency = 0.0  # the slow judge was there for the kill to land mid-run; the resume needs none

    resumed = subprocess.run([sys.executable, "-m", "studio", "run", "--resume", str(run_id), "--json"],
                             env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode in (0, 1), resumed.stderr  # 1: the function grader's error on s5
    after_rows = con.execute("SELECT sample_idx, status, score, scores, duration_ms FROM results WHERE run_id = ?"
                             " ORDER BY sample_idx", (run_id,)).fetchall()
    assert len(after_rows) == 120 and [r[0] for r in after_rows] == list(range(120))
    assert set(before_rows) <= set(after_rows)  # what was stored before the kill is untouched
    for row in before_graders:  # so is every per-grader row of a sample not every grader had finished
        slot, idx = row[0], row[1]
        assert con.execute("SELECT slot, sample_idx, status, score, duration_ms FROM grader_results WHERE run_id = ?"
                           " AND slot = ? AND sample_idx = ?", (run_id, slot, idx)).fetchone() in (row, None)
    # the judge was asked once for each sample it had not answered before the kill, and never again
    # (a call in flight when the process died is asked again: nothing of it was stored)
    assert fake_judge.requests["/v1/chat/completions"] - asked == 120 - len(judged)
    raw.close()
    watching.close()


def test_the_report_interface_reads_a_single_grader_run_and_a_suite_run_alike(lib: Library) -> None:
    """``graders_with_results``: what reports, verdicts and thresholds build on (issue 21's interface)."""
    from studio.core.store.run_graders import graders_with_results

    single = run_grader(lib, "exact", "geo", RunOptions(pass_threshold=0.7))
    [(grader, rows)] = graders_with_results(lib, single.id)
    assert (grader.key, grader.version, grader.threshold, grader.kind, grader.score_range) == \
        ("exact", 1, 0.7, "builtin", (0.0, 1.0))
    assert scores(rows) == scores(lib.runs.results(single.id)) and rows[0]["grader"] == "exact"

    lib.suites.create(SuiteDefinition(key="pair", graders=[SuiteMember(grader="short", threshold=0.3),
                                                           SuiteMember(grader="capital")]))
    run = run_grader(lib, "pair", "geo")
    both = graders_with_results(lib, run.id)
    assert [(g.key, g.threshold, g.score_range) for g, _ in both] == [("short", 0.3, None), ("capital", 0.5, (0.0, 1.0))]
    assert all(len(rows) == 30 for _, rows in both)
    assert lib.runs.results(run.id)[0]["score"] is None  # no overall rule: the sample row holds the graders' scores


def test_a_graders_runs_are_its_own_not_the_suites_it_is_in(lib: Library) -> None:
    """``runs list --grader`` and the window's "compare with previous run" read a grader's own runs."""
    lib.suites.create(SuiteDefinition(key="pair", graders=[SuiteMember(grader="exact"), SuiteMember(grader="short")]))
    own = run_grader(lib, "exact", "geo")
    suite_run = run_grader(lib, "pair", "geo")
    assert [r.id for r in lib.runs.list(grader_key="exact")] == [own.id]
    assert {r.id for r in lib.runs.list()} == {own.id, suite_run.id}
    assert suite_run.label == "suite pair v1"
