"""A suite whose every grader is a sandboxed function (each takes the stored JSON, the raw lane) reads
on the host only the rows of samples that failed (engine/stored_samples.py ``failed_rows``), as a
run of one such grader does; what it stores is what the parsed path (every row read first) stores:
a broken row is that sample's error for every grader, with the same sentence, and a good sample a
grader failed on is graded as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hostile_rows import BAD_SAMPLES, break_sample

from studio.core.engine import runner
from studio.core.engine.runner import run_grader
from studio.core.engine.stored_samples import StoredSamples
from studio.core.models import FunctionGrader, Sample
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library

ADAPTIVE = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    text = thread.completion() or ""
    if text.startswith("boom"):
        raise ValueError("boom " + text)
    return 1.0 if text == "Paris" else 0.0
"""

PROMPTFOO = """def get_assert(output, context):
    if output == "Lyon":
        return {"pass": False, "score": 0.0, "reason": "not the capital"}
    return {"pass": True, "score": 0.5 + len(output) / 100, "reason": "fine"}
"""

#: the samples whose rows a teammate broke (idx -> how), among good ones and ones a grader fails on
BROKEN = {3: "not-json", 7: "wrong-type", 12: "not-an-object", 13: "deep", 29: "not-json"}
N = 40


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(FunctionGrader(key="adaptive", source=ADAPTIVE))
    library.graders.create(FunctionGrader(key="promptfoo", contract="promptfoo", source=PROMPTFOO))
    library.suites.create(SuiteDefinition(key="functions", graders=[SuiteMember(grader="adaptive"),
                                                                     SuiteMember(grader="promptfoo")]))
    answers = ["Paris", "Lyon", "boom Paris", "Paris, France"]
    library.datasets.create("geo", [Sample(id=f"s{i}", completion=answers[i % 4], expected="Paris") for i in range(N)])
    for idx, how in BROKEN.items():
        break_sample(library, "geo", f"s{idx}", BAD_SAMPLES[how])
    return library


def stored(db_path: Path, run_id: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every column of the run's sample rows and per-grader rows but ids and durations (timings)."""
    con = sqlite3.connect(db_path)
    try:
        rows = con.execute(
            "SELECT sample_idx, sample_id, status, score, scores, rationale, details, error, raw, prompt_tokens,"
            " completion_tokens, cached FROM results WHERE run_id = ? ORDER BY sample_idx", (run_id,)).fetchall()
        graders = con.execute(
            "SELECT slot, sample_idx, status, score, scores, rationale, details, error, raw FROM grader_results"
            " WHERE run_id = ? ORDER BY slot, sample_idx", (run_id,)).fetchall()
        return rows, graders
    finally:
        con.close()


def _counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    read = StoredSamples.read
    seen: list[int] = []

    def counted(self: StoredSamples, idx: int, data: str | bytes) -> Any:
        seen.append(idx)
        return read(self, idx, data)

    monkeypatch.setattr(StoredSamples, "read", counted)
    return seen


def test_a_suite_of_raw_graders_reads_only_failed_rows_and_stores_what_the_parsed_path_does(
        lib: Library, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counted_reads(monkeypatch)
    run = run_grader(lib, "functions", "geo")
    assert run.status == "completed"
    # only the rows of samples that failed were read: the broken ones, those a grader failed on
    # ("boom ..."), and good ones a row that is no JSON failed with in the worker's request (each
    # graded again without it), each once; never the whole dataset
    failing = {i for i in range(N) if i % 4 == 2}
    assert set(BROKEN) | failing <= set(reads) and len(reads) == len(set(reads)) < N
    now = stored(db_path, run.id)

    # the parsed path (every row read before grading), as the suite lane read them before
    made = runner._Slots.__init__

    def parsed_path(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self.raw_suite = False

    monkeypatch.setattr(runner._Slots, "__init__", parsed_path)
    reads.clear()
    before = run_grader(lib, "functions", "geo")
    assert before.status == "completed" and sorted(reads) == list(range(N))
    assert stored(db_path, before.id) == now

    rows, graders = now
    by_idx = {row[0]: row for row in rows}
    for idx in BROKEN:  # the broken row's sentence for every grader
        sentences = [g[7] for g in graders if g[1] == idx]
        assert len(sentences) == 2 and len(set(sentences)) == 1 and f"“geo #{idx}” (written by" in sentences[0]
        assert by_idx[idx][2] == "error" and sentences[0] in by_idx[idx][7]
    assert {g[1] for g in graders if g[2] == "error"} == set(BROKEN) | (failing - set(BROKEN))
    assert all(by_idx[i][2] == "ok" for i in range(N) if i not in BROKEN and i not in failing)


def test_a_resumed_raw_suite_run_with_broken_rows_ends_as_a_fresh_one(lib: Library, db_path: Path) -> None:
    """As after a kill: some samples' rows are gone (broken ones, failing ones, good ones), and for a
    few only one grader's row was written before the kill; the resume grades what is missing, keeps
    what graders already gave, and the run stores what a run that never stopped stores."""
    from studio.core.engine.runner import execute_run, start_run

    fresh = run_grader(lib, "functions", "geo")
    run = start_run(lib, "functions", "geo")
    execute_run(lib, run.id)
    gone = {3, 6, 7, 10, 12, 20, 29, 33}  # broken (3, 7, 12, 29), failing (6, 10), good (20, 33)
    half = {2, 13, 14}  # the sample row gone, the first grader's row kept: a kill between the two
    with lib.engine.begin() as conn:
        for idx in gone | half:
            conn.exec_driver_sql("DELETE FROM results WHERE run_id = ? AND sample_idx = ?", (run.id, idx))
        for idx in gone:
            conn.exec_driver_sql("DELETE FROM grader_results WHERE run_id = ? AND sample_idx = ?", (run.id, idx))
        for idx in half:
            conn.exec_driver_sql("DELETE FROM grader_results WHERE run_id = ? AND sample_idx = ? AND slot > 0",
                                 (run.id, idx))
        conn.exec_driver_sql("UPDATE runs SET status = 'cancelled' WHERE id = ?", (run.id,))
        kept = conn.exec_driver_sql("SELECT sample_idx, count(*) FROM grader_results WHERE run_id = ?"
                                    " AND sample_idx IN (2, 13, 14) GROUP BY sample_idx", (run.id,)).fetchall()
    assert sorted(kept) == [(2, 1), (13, 1), (14, 1)]
    written: list[int] = []
    resumed = execute_run(lib, run.id, on_progress=lambda p: written.extend(p.written_indices()))
    assert resumed.status == "completed" and resumed.done == N
    assert sorted(written) == sorted(gone | half)  # each missing sample once, nothing else
    assert stored(db_path, resumed.id) == stored(db_path, fresh.id)
