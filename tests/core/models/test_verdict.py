"""The verdict is a rule over what a run's sections state, made without a library.

engine/sections.py ``load_run`` reads a run once; models/verdict.py ``judge`` makes the verdict from
that answer alone. Here the run is plain data of the shape the rule reads (``Judged``), so any
question the rule asked of the store or of the engine's summary would fail to import or to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.core.models import RunInfo
from studio.core.models.verdict import (
    EXIT_FAIL,
    EXIT_NOT_DONE,
    EXIT_PASS,
    Judged,
    Thresholds,
    judge,
)


@dataclass(frozen=True)
class Grader:
    key: str
    version: int
    mean: float | None
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Run:
    info: RunInfo
    sections: list[Grader]
    overall_mean: float | None
    stopped: str | None = None

    @property
    def suite(self) -> bool:
        return self.info.suite is not None

    @property
    def has_overall_score(self) -> bool:
        return self.info.has_overall_score


def _info(status: str = "completed", counts: dict[str, int] | None = None, suite: dict[str, object] | None = None) -> RunInfo:
    return RunInfo.model_validate({"id": 7, "grader_key": "g", "grader_version": 2, "dataset": "d", "status": status,
                                   "counts": counts or {"ok": 10}, "created_at": None, "suite": suite})


def test_a_mean_below_its_line_fails_and_one_at_it_passes() -> None:
    run: Judged = Run(_info(), [Grader("g", 2, 0.8)], overall_mean=0.8)
    below = judge(run, Thresholds(overall=0.9))
    assert (below.outcome, below.exit_code, below.passed) == ("fail", EXIT_FAIL, False)
    assert below.reasons == ["mean 0.8000 is below --fail-under 0.9"]
    assert below.sentence == "verdict: mean 0.8000, threshold 0.9: FAIL: mean 0.8000 is below --fail-under 0.9"
    at = judge(run, Thresholds(overall=0.8))  # the pass rule's at-least clause: the line itself passes
    assert (at.outcome, at.exit_code, at.reasons) == ("pass", EXIT_PASS, [])


def test_a_run_that_stopped_is_not_done_with_the_reason_it_stored() -> None:
    run = Run(_info(status="stopped"), [Grader("g", 2, 1.0)], overall_mean=1.0, stopped="stopped: budget: spent $1")
    verdict = judge(run)
    assert (verdict.outcome, verdict.exit_code) == ("not done", EXIT_NOT_DONE)
    assert verdict.reasons == ["the run ended stopped (stopped: budget: spent $1)"]


def test_a_suite_without_an_overall_rule_holds_each_grader_to_a_bare_line() -> None:
    suite = {"key": "s", "version": 1, "overall": "none", "graders": ["a", "b"]}
    run = Run(_info(suite=suite, counts={"ok": 4, "error": 1}),
              [Grader("a", 1, 0.95), Grader("b", 3, None, {"error": 1})], overall_mean=None)
    verdict = judge(run, Thresholds(overall=0.9, graders={"a": 0.99}))
    assert verdict.fail_under_applies_to == "each grader"
    assert [(c.key, c.fail_under, c.passed) for c in verdict.graders] == [("a", 0.99, False), ("b", 0.9, False)]
    assert verdict.reasons == ["1 sample(s) errored or were invalid (by grader: b 1)",
                               "a mean 0.9500 is below --fail-under a=0.99",
                               "b has no mean score to compare with --fail-under 0.9"]
