"""The failure streak watches the first samples by index, whatever order their results arrive in."""

from __future__ import annotations

from studio.core.engine.streak import FailureStreak
from studio.core.models import Outcome


def test_errors_from_later_samples_do_not_stop_a_run_whose_first_sample_grades() -> None:
    streak = FailureStreak(list(range(5)))
    for idx in range(8, 16):  # a second worker's batch reports first
        assert streak.observe(idx, Outcome.failure("grader raised KeyError: 'x'")) is None
    assert streak.observe(0, Outcome.scored(1.0, {"score": 1.0})) is None
    for idx in range(1, 5):
        assert streak.observe(idx, Outcome.failure("grader raised KeyError: 'x'")) is None
    assert streak.stopped is None


def test_the_first_five_failing_alike_stop_the_run_in_any_order() -> None:
    streak = FailureStreak(list(range(5)))
    said = [streak.observe(idx, Outcome.failure("wall-time limit (10 s) exceeded")) for idx in (4, 2, 0, 3, 1)]
    assert said[:4] == [None] * 4
    assert said[4] is not None and said[4].startswith("stopped after the first 5 samples all failed the same way")
    assert "wall-time limit (10 s) exceeded" in said[4] and "--keep-going" in said[4]


def test_different_failures_or_a_small_dataset_do_not_stop() -> None:
    streak = FailureStreak(list(range(5)))
    for idx in range(5):
        streak.observe(idx, Outcome.failure(f"grader raised KeyError: 'sample-{chr(97 + idx)}'"))
    assert streak.stopped is None
    small = FailureStreak([0, 1, 2])
    for idx in range(3):
        small.observe(idx, Outcome.failure("same"))
    assert small.stopped is None
