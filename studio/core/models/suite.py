"""A suite: several graders run together over one dataset, each pinned to a version or following
the current one, with an optional weight and pass threshold, and an optional overall score.

The overall rule: ``mean`` (the weighted mean of the graders' scores), ``all-pass`` (1 when every
grader reaches its threshold, else 0) or ``composite`` (a composite grader of the library, whose
components name the suite's graders by key, combines them by its own mode and weights). NA (a
skipped grader) is left out of every rule and an error makes the overall an error: neither is a 0.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .common import SLUG_PATTERN

OverallRule = Literal["none", "mean", "all-pass", "composite"]


class SuiteMember(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    grader: str = Field(pattern=SLUG_PATTERN)
    #: None: follow the grader's current version at each run
    version: int | None = Field(default=None, ge=1)
    weight: float = 1.0
    #: the score counted as a pass for this grader (None: the run's pass threshold)
    threshold: float | None = None

    @field_validator("weight", "threshold")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


class SuiteDefinition(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    key: str = Field(pattern=SLUG_PATTERN, description="Unique slug among live suites")
    name: str = ""
    description: str = ""
    graders: list[SuiteMember] = Field(min_length=1)
    overall: OverallRule = "none"
    #: the composite grader whose rule gives the overall score (with ``overall: composite``)
    overall_grader: str | None = None
    #: the file the suite was imported from, as JSON text, its graders left out (an OpenAI eval's
    #: name, data source and metadata, in their order), so an export writes the file back as it was
    origin: str | None = None

    @model_validator(mode="after")
    def _check(self) -> SuiteDefinition:
        seen: set[str] = set()
        for member in self.graders:
            if member.grader in seen:
                raise ValueError(f"grader {member.grader!r} is in the suite twice")
            seen.add(member.grader)
        if (self.overall == "composite") != (self.overall_grader is not None):
            raise ValueError("overall: composite needs overall_grader (and only it takes one)")
        return self

    def grader_keys(self) -> list[str]:
        return [m.grader for m in self.graders]

    def member(self, key: str) -> SuiteMember | None:
        return next((m for m in self.graders if m.grader == key), None)
