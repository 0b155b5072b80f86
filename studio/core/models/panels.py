"""The pairwise judge: two answers to one prompt, compared in both orders.

Why here and not in ``judges.py``: it exists to measure a judge's failure mode (position bias),
not to grade one answer; keeping it apart keeps that module about single prompt judges. The jury
(several judges, aggregated) is in ``definition.py``: a juror holds a full grader definition, so
it lives beside the union it refers to, as the composite does, and no module imports back.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .judges import JudgeBase

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

    @model_validator(mode="after")
    def _two_sources(self) -> PairwiseJudge:
        if self.answer_a == self.answer_b:
            raise ValueError(f"answer_a and answer_b both read {self.answer_a!r}; a pairwise judge "
                             "compares two different answers")
        return self
