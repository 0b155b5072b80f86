"""Stop a run that cannot work: the same failure on the first samples, none passing.

A grader that hangs or crashes on every sample would otherwise grind through the whole dataset at
one timeout per sample. After ``limit`` samples in a row fail the same way before any sample grades,
the run stops with one sentence; ``keep_going`` (``run --keep-going``) grades everything anyway.
Once one sample grades (ok, invalid or skipped) the watch ends: later failures are the data's.
"""

from __future__ import annotations

import re

from studio.core.models import Outcome

STREAK_LIMIT = 5

_NUMBERS = re.compile(r"\d+")


def _signature(error: str | None) -> str:
    """The failure without what varies between samples that fail the same way (sizes, counts)."""
    return _NUMBERS.sub("#", (error or "")[:300])


class FailureStreak:
    """Watches the first ``limit`` samples of a run (by index: ``first``), whatever order their
    results arrive in; any sample that grades ends the watch."""

    def __init__(self, first: list[int], limit: int = STREAK_LIMIT) -> None:
        self.first = set(first[:limit])
        self.limit = len(self.first)
        self.seen: dict[int, str | None] = {}
        self.over = self.limit < limit  # fewer samples than the streak: nothing to stop
        self.stopped: str | None = None

    def observe(self, idx: int, outcome: Outcome) -> str | None:
        """The sentence that stops the run, once the first samples all failed alike; else None."""
        return self.observe_result(idx, outcome.status, outcome.error)

    def observe_result(self, idx: int, status: str, error: str | None) -> str | None:
        """``observe`` from a result's status and error (the writer holds rows, not Outcomes)."""
        if self.over or error == "cancelled":
            return None
        if status != "error":
            self.over = True
            return None
        if idx not in self.first:
            return None
        self.seen[idx] = error
        if len(self.seen) < self.limit:
            return None
        self.over = True
        errors = [self.seen[i] for i in sorted(self.seen)]
        if len({_signature(e) for e in errors}) != 1:
            return None
        self.stopped = (f"stopped after the first {self.limit} samples all failed the same way, none graded: "
                        f"{errors[0]} (fix the grader, or pass --keep-going to grade every sample anyway)")
        return self.stopped
