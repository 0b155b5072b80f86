"""Reading ``--fail-under`` into thresholds, and the verdict the engine's callers ask for.

The thresholds are read and checked with the rest of a run request (engine/request.py ``check``),
before any run exists: each refusal a ``ThresholdError``, a sentence. The verdict itself is a pure
rule over the run's sections and lives low, beside the pass rule it applies (models/verdict.py);
the CLI, the window and the reports import it from here as they always did.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from studio.core.errors import StudioError
from studio.core.models.verdict import (
    EXIT_FAIL,
    EXIT_NOT_DONE,
    EXIT_PASS,
    NO_OVERALL,
    GraderCheck,
    Judged,
    Thresholds,
    Verdict,
    judge,
    verdict_line,
)

__all__ = ["EXIT_FAIL", "EXIT_NOT_DONE", "EXIT_PASS", "NO_OVERALL", "GraderCheck", "Judged", "ThresholdError",
           "Thresholds", "Verdict", "check_keys", "judge", "parse_thresholds", "verdict_line"]


class ThresholdError(StudioError, ValueError):
    """A ``--fail-under`` that cannot be read, or names a grader the run does not have."""


def _number(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ThresholdError(f"{option} takes a score such as 0.9 or KEY=0.9, not {text!r}") from None
    if not math.isfinite(value):
        raise ThresholdError(f"{option} takes a finite score, not {text!r}")
    return value


def parse_thresholds(values: Iterable[str] | None, option: str = "--fail-under") -> Thresholds:
    """``["0.9", "judge=0.8"]``: the overall threshold (at most one) and per-grader ones."""
    out = Thresholds()
    for raw in values or []:
        text = str(raw).strip()
        key, sep, number = text.rpartition("=")
        if not sep:
            if out.overall is not None:
                raise ThresholdError(f"{option} without a KEY= may be given once (got {out.overall:g} and {text})")
            out.overall = _number(text, option)
            continue
        key = key.strip()
        if not key:
            raise ThresholdError(f"{option} {text!r} names no grader before '='")
        if key in out.graders:
            raise ThresholdError(f"{option} gives grader {key!r} two thresholds")
        out.graders[key] = _number(number.strip(), option)
    return out


def check_keys(thresholds: Thresholds, keys: Sequence[str], option: str = "--fail-under") -> None:
    """Refuse a per-grader threshold for a grader the run does not grade (before the run exists)."""
    unknown = sorted(set(thresholds.graders) - set(keys))
    if unknown:
        raise ThresholdError(f"{option} names {', '.join(map(repr, unknown))}, which this run does not "
                             f"grade (its graders: {', '.join(keys)})")
