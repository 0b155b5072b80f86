"""LLM judge definitions: binary, range, rubric (Letta), criteria (HUD) and the pre-built RAG judges."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from studio.core.json_types import JsonObject

from .common import GraderBase, is_stored
from .thread import Turn


class JudgeBase(GraderBase):
    """An endpoint (by name, configured in the library) and an optional model override."""

    endpoint: str | None = None
    model: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = None
    system_template: str | None = Field(default=None, description="Handlebars; None = built-in")
    user_template: str | None = Field(default=None, description="Handlebars; None = built-in")
    template_variables: JsonObject = Field(default_factory=dict)

    def own_endpoints(self) -> tuple[str | None, ...]:
        return (self.endpoint,)

    def call_limits(self) -> tuple[int | None, float | None]:
        """(retries, timeout in seconds) this judge sets for its own calls, over its endpoint's; None: the endpoint's."""
        return None, None


class Shot(BaseModel):
    """A few-shot example: an input thread, the completion, the expected reasoning and verdict."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    messages: list[Turn] = Field(default_factory=list)
    completion: str = ""
    reasoning: str = ""


class BinaryShot(Shot):
    verdict: Literal["PASS", "FAIL", "NA"] = "PASS"


class RangeShot(Shot):
    score: int


class BinaryJudge(JudgeBase):
    kind: Literal["binary_judge"] = "binary_judge"
    criteria: str
    examples: list[BinaryShot] = Field(default_factory=list)


class Subrange(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    min: int
    max: int
    expectation: str


def subrange_problems(score_range: tuple[int, int], subranges: Sequence[tuple[int, int]]) -> list[str]:
    """What is wrong with subranges (min, max) over ``score_range``, one "subrange N: ..." each: a
    subrange that runs backwards ("10 to 5" in the judge's prompt) or leaves the score range. The
    model's validator (field ``subrange_expectations``) and the designer's live check both ask this."""
    low, high = score_range
    problems = []
    for n, (lo, hi) in enumerate(subranges, 1):
        if lo > hi:
            problems.append(f"subrange {n} runs backwards: its min {lo} is above its max {hi} "
                            "(a subrange runs from its min up to its max)")
        elif lo < low or hi > high:
            problems.append(f"subrange {n} ({lo} to {hi}) is outside the score range {low} to {high}")
    return problems


def subrange_gaps(score_range: tuple[int, int], subranges: Sequence[tuple[int, int]]) -> list[int]:
    """Scores of ``score_range`` that no subrange (min, max) covers."""
    covered: set[int] = set()
    for lo, hi in subranges:
        covered.update(range(lo, hi + 1))
    low, high = score_range
    return [s for s in range(low, high + 1) if s not in covered]


class RangeJudge(JudgeBase):
    kind: Literal["range_judge"] = "range_judge"
    criteria: str
    score_range: tuple[int, int] = (1, 5)
    evaluation_steps: list[str] | None = None
    subrange_expectations: list[Subrange] = Field(default_factory=list)
    shots: list[RangeShot] = Field(default_factory=list)
    normalize: bool = True

    @model_validator(mode="after")
    def _check_range(self) -> RangeJudge:
        low, high = self.score_range
        if low >= high:
            raise ValueError(f"score_range must have min < max, got {low}..{high}")
        for shot in self.shots:
            if not low <= shot.score <= high:
                raise ValueError(f"shot score {shot.score} is outside the range {low}..{high}")
        return self

    @field_validator("subrange_expectations")
    @classmethod
    def _check_subranges(cls, value: list[Subrange], info: ValidationInfo) -> list[Subrange]:
        """Refused here (the field named, a file's error on its line); a stored row from before the
        rule loads and says so through ``problems()`` (common.STORED)."""
        score_range = info.data.get("score_range")
        if is_stored(info.context) or score_range is None or score_range[0] >= score_range[1]:
            return value  # an invalid score range is the model validator's sentence
        problems = subrange_problems(score_range, [(s.min, s.max) for s in value])
        if problems:
            raise ValueError("; ".join(problems))
        return value

    def problems(self) -> list[str]:
        pairs = [(s.min, s.max) for s in self.subrange_expectations]
        return [f"subrange_expectations: {p}" for p in subrange_problems(self.score_range, pairs)]

    def subrange_gaps(self) -> list[int]:
        """Scores of the range that no subrange expectation describes (the designer warns on them)."""
        return subrange_gaps(self.score_range, [(s.min, s.max) for s in self.subrange_expectations])


class RubricJudge(JudgeBase):
    """Letta's model judge: a prompt with {input}/{submission}/{ground_truth}, JSON {score, rationale}."""

    kind: Literal["rubric_judge"] = "rubric_judge"
    prompt: str
    system_prompt: str | None = None
    provider: Literal["openai", "anthropic", "google"] = "openai"
    max_retries: int = Field(default=5, ge=0, le=20)
    timeout: float = Field(default=120.0, gt=0)

    def call_limits(self) -> tuple[int | None, float | None]:
        """Letta's own retries and timeout, where the definition sets them."""
        return (self.max_retries if "max_retries" in self.model_fields_set else None,
                self.timeout if "timeout" in self.model_fields_set else None)


class Criterion(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    text: str
    weight: float = 1.0


class CriteriaJudge(JudgeBase):
    """HUD's LLMJudgeGrader: one MET/UNMET verdict per weighted criterion."""

    kind: Literal["criteria_judge"] = "criteria_judge"
    criteria: list[Criterion] = Field(min_length=1)


class LetterJudge(JudgeBase):
    """Inspect's model-graded scorers (model_graded_qa/fact): one user prompt, a ``GRADE: X`` letter.

    ``template`` is a Python format string over ``question``, ``answer``, ``criterion`` (the expected
    answer), ``instructions`` and the sample's metadata keys; ``instructions`` None means the default
    ones for ``partial_credit``; ``grade_pattern`` None reads the last ``GRADE:`` word. C scores 1.0,
    P 0.5, I 0.0; an answer without a usable grade is an error (Inspect leaves it unscored).
    """

    kind: Literal["letter_judge"] = "letter_judge"
    template: str
    instructions: str | None = None
    grade_pattern: str | None = None
    partial_credit: bool = False
    include_history: bool = False


PrebuiltMetric = Literal["faithfulness", "context_relevancy", "answer_relevancy"]


class PrebuiltJudge(JudgeBase):
    kind: Literal["prebuilt"] = "prebuilt"
    metric_type: PrebuiltMetric
