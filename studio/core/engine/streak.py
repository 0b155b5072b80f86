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


def _signature(outcome: Outcome) -> str:
    """The failure without what varies between samples that fail the same way (sizes, counts)."""
    return _NUMBERS.sub("#", (outcome.error or "")[:300])


class FailureStreak:
    def __init__(self, limit: int = STREAK_LIMIT) -> None:
        self.limit = limit
        self.count = 0
        self.signature: str | None = None
        self.first_error = ""
        self.over = False  # a sample graded: nothing to watch any more
        self.stopped: str | None = None

    def observe(self, outcome: Outcome) -> str | None:
        """The sentence that stops the run, once the streak is reached; None otherwise."""
        if self.over or outcome.error == "cancelled":
            return None
        if outcome.status != "error":
            self.over = True
            return None
        signature = _signature(outcome)
        if signature != self.signature:
            self.signature, self.count, self.first_error = signature, 0, outcome.error or ""
        self.count += 1
        if self.count >= self.limit:
            self.over = True
            self.stopped = (f"stopped after the first {self.count} samples all failed the same way, none graded: "
                    f"{self.first_error} (fix the grader, or pass --keep-going to grade every sample anyway)")
            return self.stopped
        return None
