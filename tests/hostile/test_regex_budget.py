"""A dataset cannot pin a core with slow patterns: a run spends at most ``RUN_BUDGET_S`` (each grader
``GRADER_BUDGET_S``) on regex matches stopped at the deadline; past it, every further match that
needs the slow engine is refused at once with one sentence, and the run finishes."""

from __future__ import annotations

import pytest
from judge_helpers import qa

from studio.core import saferegex
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import BuiltinGrader
from studio.core.store import Library

#: text only the helper may match (not ASCII), on which each pattern below backtracks for minutes
TEXT = "a" * 40 + "é"


def slow(n: int) -> str:
    """A different catastrophic pattern per row (so no per-pattern cache or breaker can help)."""
    return rf"^(a+)+b{{{n}}}$"


@pytest.fixture
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 0.2 s deadline and budgets of 5 and 7 deadlines, so the test spends seconds, not minutes."""
    monkeypatch.setattr(saferegex, "DEADLINE_S", 0.2)
    monkeypatch.setattr(saferegex, "GRADER_BUDGET_S", 1.0)
    monkeypatch.setattr(saferegex, "RUN_BUDGET_S", 1.4)


def test_a_run_stops_matching_slow_patterns_once_its_budget_is_spent(library: Library, short_deadline: None) -> None:
    library.graders.create(BuiltinGrader(key="rx", function="regex_match"))
    rows = [qa(f"s{n}", "q", TEXT, slow(n + 1)) for n in range(15)] + [qa("plain", "q", "abc", "b+")]
    library.datasets.create("d", rows)
    run = run_grader(library, "rx", "d", RunOptions(concurrency=1, keep_going=True))
    assert run.status == "completed"
    results = {r["sample_id"]: r for r in library.runs.results(run.id)}
    errors = [r["error"] for sid, r in results.items() if sid != "plain"]
    stopped = [e for e in errors if "was stopped" in e]
    refused = [e for e in errors if e.startswith("not matched: rx already spent 1 s")]
    assert len(stopped) == 5 and len(refused) == 10, errors
    assert "at most 1 s per grader" in refused[0]
    assert results["plain"]["status"] == "ok" and results["plain"]["score"] == 1.0  # RE2 goes on


def test_the_run_budget_is_shared_by_its_graders(short_deadline: None) -> None:
    budget = saferegex.TimeoutBudget()
    token = saferegex.use_budget(budget, "first")
    try:
        outcomes: dict[str, list[str]] = {"first": [], "second": []}
        for n in range(12):
            scope = "first" if n < 6 else "second"
            with saferegex.budget_scope(scope):
                try:
                    saferegex.matches(slow(n + 1), TEXT)
                except saferegex.RegexFailure as exc:
                    outcomes[scope].append(type(exc).__name__)
    finally:
        saferegex.end_budget(token)
    # the first grader spends its 1 s (5 deadlines); the second has 0.4 s of the run's 1.4 s left
    assert outcomes["first"] == ["RegexTimeout"] * 5 + ["RegexBudgetSpent"]
    assert outcomes["second"] == ["RegexTimeout"] * 2 + ["RegexBudgetSpent"] * 4
    assert budget.refusal("third") is not None and "at most 1.4 s per run" in str(budget.refusal("third"))
