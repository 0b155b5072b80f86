"""A grader kind from outside the studio, in one file: a word budget (the answer's length against
a limit). ``KIND`` is all the studio needs; tests/test_adding_a_kind_and_provider.py registers this
module under the ``grader_studio.kinds`` entry point, as a package's metadata would."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from studio.core.kinds import Kind, refused
from studio.core.models import GraderBase, Outcome, Sample
from studio.core.scoring import GradingContext, ScorerBase


class WordBudget(GraderBase):
    """1.0 when the answer keeps to ``max_words`` words, else the share of them it kept to."""

    kind: Literal["word_budget"] = "word_budget"
    max_words: int = Field(gt=0)


class WordBudgetScorer(ScorerBase):
    def __init__(self, grader: WordBudget) -> None:
        self.grader = grader

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return [self._one(sample) for sample in samples]

    def _one(self, sample: Sample) -> Outcome:
        words = len((sample.completion or "").split())
        score = 1.0 if words <= self.grader.max_words else self.grader.max_words / words
        return Outcome.scored(score, {self.grader.metric.key: score})


def make_scorer(grader: Any, ctx: GradingContext) -> WordBudgetScorer:
    return WordBudgetScorer(grader)


KIND = Kind(kind="word_budget", label="Word budget", model=WordBudget, scorer=f"{__name__}:make_scorer",
            family="rule", rank=90, starter={"max_words": 50}, editor="yaml", cluster=True,
            platforms={"hud": refused("HUD has no word budget, by the toy's own word")})
