"""A sandboxed function grader's replies become result rows without an Outcome each (the rows lane);
what is stored must be exactly what the Outcome lane stores, for every kind of reply a grader gives."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from studio.core.engine.runner import Progress, run_grader
from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.store import Library
from studio.core.store.runs import outcome_values, row_outcome

ADAPTIVE = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    c = thread.completion() or ""
    if c == "raise":
        raise ValueError("no " + c)
    if c == "print":
        print("looked at", c)
        return 1.0
    return {"f": 0.25, "i": 1, "b": True, "nan": float("nan"), "inf": float("-inf"), "none": None,
            "s": "text", "big": 1e300, "neg0": -0.0, "dict": {"a": 1}, "huge": 10 ** 400}[c]
"""

PROMPTFOO = """def get_assert(output, context):
    if output == "raise":
        raise KeyError(output)
    return {"f": 0.75, "i": 0, "b": False, "nan": float("nan"), "inf": float("inf"), "none": None,
            "s": "text", "big": -1e300, "neg0": -0.0, "dict": {"pass": True, "reason": "fine"},
            "huge": {"score": 10 ** 400}, "print": {"score": 2.5}}[output]
"""

CASES = ["f", "i", "b", "nan", "inf", "none", "s", "big", "neg0", "dict", "huge", "raise", "print"]


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(FunctionGrader(key="adaptive", source=ADAPTIVE))
    library.graders.create(FunctionGrader(key="promptfoo", contract="promptfoo", source=PROMPTFOO))
    # every case many times over, so batches of several sizes carry a mix of hot and other replies
    samples = [Sample(id=f"s{i}", completion=CASES[i % len(CASES)], expected="x") for i in range(600)]
    library.datasets.create("mixed", samples)
    return library


def stored(db_path: Any, run_id: int) -> list[tuple[Any, ...]]:
    """Every column of the run's rows but the row id and the duration (a timing)."""
    con = sqlite3.connect(db_path)
    try:
        return con.execute(
            "SELECT sample_idx, sample_id, status, score, scores, rationale, details, error, raw, prompt_tokens,"
            " completion_tokens, cached FROM results WHERE run_id = ? ORDER BY sample_idx", (run_id,)).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("key", ["adaptive", "promptfoo"])
def test_the_rows_lane_stores_what_the_outcome_lane_stores(lib: Library, db_path: Any, key: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    lanes: list[str] = []
    original = FunctionScorer.score_raw_rows

    async def rows_lane(self, run_id, batch):  # type: ignore[no-untyped-def]
        lanes.append("rows")
        return await original(self, run_id, batch)

    monkeypatch.setattr(FunctionScorer, "score_raw_rows", rows_lane)
    events: list[Progress] = []
    fast = run_grader(lib, key, "mixed", on_progress=events.append)
    assert lanes and set(lanes) == {"rows"}

    made = FunctionScorer.__init__

    def without_rows(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made(self, *args, **kwargs)
        self.lanes = self.lanes - {"rows"}

    monkeypatch.setattr(FunctionScorer, "__init__", without_rows)  # the engine falls back to Outcomes
    slow = run_grader(lib, key, "mixed")

    assert fast.done == slow.done == 600
    rows = stored(db_path, fast.id)
    assert rows == stored(db_path, slow.id)
    assert fast.aggregates["mean"] == slow.aggregates["mean"] and fast.counts == slow.counts
    assert {r[2] for r in rows} >= {"ok", "invalid", "error"}  # the mix really was mixed
    # the progress events report each sample once, and their Outcomes are what was stored
    written = [pair for event in events for pair in event.written]
    assert sorted(idx for idx, _ in written) == list(range(600))
    by_idx = {r[0]: r for r in rows}
    for idx, outcome in written:
        assert outcome_values(fast.id, idx, by_idx[idx][1], outcome)[1:10] == by_idx[idx][:9]


def test_a_row_round_trips_through_its_outcome() -> None:
    outcome = Outcome(status="invalid", score=0.0, scores={"m": 0.0}, rationale="r", details={"printed": "x\n"},
                      error="returned str instead of a number", raw={"v": [1, "nan"]}, duration_ms=1.5,
                      prompt_tokens=3, completion_tokens=4, cached=True)
    assert row_outcome(outcome_values(1, 2, "s2", outcome)) == outcome


def test_results_of_a_run_that_does_not_exist_are_refused(library: Library) -> None:
    # the foreign key is checked once a write instead of once a row: still checked
    row = outcome_values(999, 0, "s0", Outcome.scored(1.0, {"m": 1.0}))
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        library.runs.write_rows([row])
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM results").scalar() == 0
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1  # the connection is as it was
