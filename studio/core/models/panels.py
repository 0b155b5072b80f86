"""Judges that compare or combine other judges: the pairwise judge and the jury.

Why here and not in ``judges.py``: both exist to measure a judge's failure modes (position bias,
the variance of one large judge), not to grade one answer; keeping them together keeps that
module about single prompt judges. ``Juror.grader`` is a full grader definition (``union.py``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .common import GraderBase
from .judges import JudgeBase
from .pass_rule import DEFAULT_PASS_THRESHOLD
from .union import GraderDefinition, _registry

PAIRWISE_CRITERIA = (
    "Which response answers the user's question better: correct first, then complete and clear. "
    "When a reference answer is given, the response that agrees with it is better."
)


class PairwiseJudge(JudgeBase):
    """Two answers to the same prompt: A, B or tie, always asked in both orders.

    ``answer_a`` / ``answer_b`` name where each answer comes from: ``completion`` (the sample's
    completion) or a key of the sample's metadata or original row (``completion_a``). A sample's
    verdict stands only when both orders agree; otherwise it is "inconsistent" (never a tie).
    The score is A's: 1 when A wins, 0 when B wins, 0.5 for a tie.
    """

    kind: Literal["pairwise_judge"] = "pairwise_judge"
    criteria: str = PAIRWISE_CRITERIA
    answer_a: str = Field(default="completion_a", min_length=1)
    answer_b: str = Field(default="completion_b", min_length=1)

    def judged_field(self) -> str:
        return self.answer_a

    @model_validator(mode="after")
    def _two_sources(self) -> PairwiseJudge:
        if self.answer_a == self.answer_b:
            raise ValueError(f"answer_a and answer_b both read {self.answer_a!r}; a pairwise judge "
                             "compares two different answers")
        return self


JuryAggregation = Literal["majority", "mean", "min", "weighted"]


class Juror(BaseModel):
    """One judge of a jury, with its own endpoint and model (set on its grader definition)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str | None = None
    weight: float = Field(default=1.0, gt=0)
    grader: GraderDefinition

    @property
    def label(self) -> str:
        return self.name or self.grader.key

    @model_validator(mode="after")
    def _a_single_judge(self) -> Juror:
        kind = _registry().get_kind(self.grader.kind)  # the kind registry, reached by name (it sits above)
        if not kind.is_judge or kind.pairs:
            raise ValueError(f"juror {self.label!r} is a {self.grader.kind}; a juror is a prompt judge "
                             "(binary, range, rubric, criteria, letter or pre-built)")
        return self


class JuryGrader(GraderBase):
    """Several judges grade each sample concurrently; their scores are aggregated.

    ``majority``: each juror's verdict is pass when its score reaches ``threshold``; the sample
    scores 1 when more jurors pass than fail, 0 when fewer, 0.5 on a tie (marked as one).
    ``mean``/``min``/``weighted`` combine the scores. A juror that fails is marked on the sample;
    the sample fails only when fewer than ``quorum`` jurors answered (default: a strict majority).
    """

    kind: Literal["jury"] = "jury"
    PARTS_FIELD: ClassVar[str | None] = "jurors"

    def parts_needed(self) -> int | None:
        return self.needed
    aggregation: JuryAggregation = "majority"
    threshold: float = DEFAULT_PASS_THRESHOLD
    quorum: int | None = Field(default=None, ge=1)
    jurors: list[Juror] = Field(min_length=2)

    @model_validator(mode="after")
    def _check_quorum(self) -> JuryGrader:
        if self.quorum is not None and self.quorum > len(self.jurors):
            raise ValueError(f"quorum {self.quorum} is more than the {len(self.jurors)} jurors")
        return self

    @property
    def needed(self) -> int:
        """Jurors that must answer for a sample to be graded."""
        return self.quorum if self.quorum is not None else len(self.jurors) // 2 + 1

    def juror_names(self) -> list[str]:
        """Unique names, in order (a repeated name gets ``-2``, ``-3``)."""
        seen: dict[str, int] = {}
        out = []
        for juror in self.jurors:
            base = juror.label
            seen[base] = seen.get(base, 0) + 1
            out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
        return out
