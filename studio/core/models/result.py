"""What grading produces: a per-sample outcome, and runs with their aggregates."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from studio.core.json_types import JsonObject, JsonValue

from .pass_rule import DEFAULT_PASS_THRESHOLD, run_threshold

__all__ = ["DEFAULT_PASS_THRESHOLD", "Outcome", "RunInfo", "valid_number"]

OutcomeStatus = Literal["ok", "error", "invalid", "skipped"]
#: "stopped": the run reached its spend cap (run --max-cost / --max-tokens); resume with a higher one
RunStatus = Literal["pending", "running", "completed", "cancelled", "failed", "interrupted", "stopped"]


class Outcome(BaseModel):
    """One sample's grade.

    ``error`` samples failed to grade (timeout, crash, endpoint down); ``invalid`` ones returned
    something that is not a score (bool, NaN, text: MKA1's rule gives them 0 with the payload kept);
    ``skipped`` ones are excluded from aggregates (a binary judge's NA).
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    status: OutcomeStatus = "ok"
    score: float | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    rationale: str | None = None
    details: JsonObject = Field(default_factory=dict)
    error: str | None = None
    raw: JsonValue = None
    duration_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    #: of ``prompt_tokens``, those the endpoint said it served from its own prompt cache
    cached_tokens: int = 0

    @classmethod
    def scored(cls, score: float, scores: dict[str, float], *, duration_ms: float = 0.0,
               details: JsonObject | None = None, rationale: str | None = None) -> Outcome:
        """An ok outcome: the constructor every scorer's hot path uses (validating a dict is the
        fastest way pydantic builds a model; ``model_construct`` is twice as slow)."""
        data: JsonObject = {"status": "ok", "score": score, "scores": scores, "duration_ms": duration_ms}
        if details:
            data["details"] = details
        if rationale is not None:
            data["rationale"] = rationale
        return cls.model_validate(data)

    @classmethod
    def failure(cls, error: str, *, duration_ms: float = 0.0, raw: JsonValue = None) -> Outcome:
        return cls(status="error", score=None, error=error, duration_ms=duration_ms, raw=raw)

    @classmethod
    def invalid(cls, error: str, raw: JsonValue, *, duration_ms: float = 0.0) -> Outcome:
        return cls(status="invalid", score=0.0, error=error, raw=raw, duration_ms=duration_ms)


def valid_number(value: object) -> TypeGuard[int | float]:

    """Platforms' rule: int or float, not bool, finite (an int beyond a float's range is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float (a grader returned 10 ** 400)
        return False


class RunInfo(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: int
    grader_key: str
    grader_version: int
    dataset: str
    status: RunStatus
    endpoint: str | None = None
    total: int = 0
    done: int = 0
    counts: dict[str, int] = Field(default_factory=dict)
    aggregates: JsonObject = Field(default_factory=dict)
    settings: JsonObject = Field(default_factory=dict)
    #: None: the library holds a time that is no time (a hand edit of a SQLite file): unknown
    created_at: datetime | None
    finished_at: datetime | None = None
    #: a suite run's plan: {"key": suite key or None for ``run --graders``, "version", "overall",
    #: "overall_grader", "graders": [keys]}; None for a run of one grader
    suite: JsonObject | None = None

    @property
    def overall_rule(self) -> str | None:
        """A suite run's overall rule (mean, all-pass, composite); None for a suite without one
        (it has no one score) and for a run of one grader (its one score is its grader's)."""
        if self.suite is None:
            return None
        rule = str(self.suite.get("overall") or "none")
        return None if rule == "none" else rule

    @property
    def has_overall_score(self) -> bool:
        """A run of one grader (its mean) or a suite with an overall rule: what a surface may offer
        as "the run's score" (a suite without a rule has only its graders' scores)."""
        return self.suite is None or self.overall_rule is not None

    @property
    def pass_threshold(self) -> float:
        """The score at or above which a sample passed (``pass_rule.run_threshold``: the settings'
        first, then the aggregates', else the default). The one place every report reads it."""
        return run_threshold(self.settings, self.aggregates)

    @property
    def label(self) -> str:
        """What a person calls the run's grading: ``key vN``, ``suite KEY vN`` or ``graders a, b``."""
        if self.suite is None:
            return f"{self.grader_key} v{self.grader_version}"
        if self.suite.get("key"):
            version = self.suite.get("version")
            return f"suite {self.suite['key']}" + (f" v{version}" if version else "")
        return "graders " + ", ".join(self.suite.get("graders") or [])
