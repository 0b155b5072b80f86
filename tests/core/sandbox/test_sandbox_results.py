"""The platforms' result rules, applied to raw worker entries (no process needed)."""

from __future__ import annotations

import math

from studio.core.sandbox.results import (
    LIMIT,
    MEMORY,
    OK,
    RAISED,
    TOO_LARGE,
    batch_outcomes,
    to_outcome,
)


def outcome(value: object, contract: str = "adaptive"):  # type: ignore[no-untyped-def]
    return to_outcome([0, OK, value], contract, "score", 256, 64)


def test_numbers_are_scores_and_everything_else_is_invalid() -> None:
    assert outcome(0.5).status == "ok" and outcome(0.5).score == 0.5
    assert outcome(1).score == 1.0 and outcome(1).scores == {"score": 1.0}
    for bad in (True, False, math.nan, math.inf, "1.0", None, [1.0]):
        result = outcome(bad)
        assert result.status == "invalid", bad
        assert result.score == 0.0 and result.error


def test_invalid_keeps_the_raw_payload() -> None:
    result = outcome("yes")
    assert result.raw == "yes" and "str" in (result.error or "")
    assert outcome(math.nan).raw == "nan"


def test_mka1_dict_keeps_only_finite_scores_and_the_judge() -> None:
    result = outcome({"scores": {"em": 1.0, "bad": math.nan, "flag": True, "f1": 0.5}, "judge": {"why": "x"}}, "mka1_sample")
    assert result.status == "ok"
    assert result.scores == {"em": 1.0, "f1": 0.5}
    assert result.score == 1.0
    assert result.details["judge"] == {"why": "x"}
    empty = outcome({"scores": {"a": math.inf}}, "mka1_sample")
    assert empty.status == "invalid" and empty.score == 0.0


def test_mka1_prefers_the_metric_key() -> None:
    result = to_outcome([0, OK, {"scores": {"a": 0.1, "acc": 0.9}}], "mka1_sample", "acc", 256, 64)
    assert result.score == 0.9


def test_exceptions_are_errors_for_adaptive_and_invalid_for_mka1() -> None:
    entry = [0, RAISED, "ValueError: boom", "ValueError", 3]
    adaptive = to_outcome(entry, "adaptive", "score", 256, 64)
    assert adaptive.status == "error" and "boom" in (adaptive.error or "") and adaptive.details["line"] == 3
    mka1 = to_outcome(entry, "mka1_sample", "score", 256, 64)
    assert mka1.status == "invalid" and mka1.score == 0.0


def test_limits_name_the_limit() -> None:
    assert "memory limit (256 MB)" in (to_outcome([0, MEMORY, "", ""], "adaptive", "s", 256, 64).error or "")
    assert "output size limit (64 KiB)" in (to_outcome([0, TOO_LARGE, "x", 999999], "adaptive", "s", 256, 64).error or "")
    assert to_outcome([0, LIMIT, "wall-time limit (2 s) exceeded", "timeout"], "adaptive", "s", 256, 64).error == "wall-time limit (2 s) exceeded"


def test_promptfoo_bool_number_and_dict() -> None:
    assert outcome(True, "promptfoo").score == 1.0
    assert outcome(False, "promptfoo").score == 0.0
    assert outcome(0.25, "promptfoo").score == 0.25
    graded = outcome({"pass": True, "score": 0.8, "reason": "close"}, "promptfoo")
    assert graded.score == 0.8 and graded.rationale == "close" and graded.details["pass"] is True
    assert outcome({"pass": False, "reason": "no"}, "promptfoo").score == 0.0
    assert outcome({"reason": "no"}, "promptfoo").status == "invalid"
    assert outcome({"pass": "yes"}, "promptfoo").status == "invalid"


def test_letta_grade_result() -> None:
    ok = outcome({"__grade_result__": True, "score": 0.5, "rationale": "half", "metadata": {}}, "letta")
    assert ok.score == 0.5 and ok.rationale == "half"
    assert outcome({"__grade_result__": True, "score": 1.5}, "letta").status == "invalid"
    assert outcome({"__grade_result__": True, "score": True}, "letta").status == "invalid"


def test_batch_metrics_and_sample_updates() -> None:
    value = {
        "metrics": {"acc": 0.5, "bad": math.nan},
        "samples": [{"sample_id": "a", "scores": {"correct": 1.0}, "judge": {"k": 1}}, {"sample_id": "zz"}],
    }
    outcomes, metrics = batch_outcomes(value, ["a", "b"], "correct")
    assert metrics == {"acc": 0.5}
    assert outcomes[0].score == 1.0 and outcomes[0].details["judge"] == {"k": 1}
    assert outcomes[1].status == "ok" and outcomes[1].score is None
    bad, none = batch_outcomes([1, 2], ["a"], "score")
    assert bad[0].status == "invalid" and none == {}
