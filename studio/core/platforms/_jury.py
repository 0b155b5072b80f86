"""How a jury travels to the platforms that can express one, and why the others refuse it.

HUD: ``combine`` of the jurors' LLMJudgeGraders (criteria judges), weighted by the jurors' weights
(``mean`` is equal weights, ``min`` is ``combine_all``); HUD has no majority vote. Inspect: a
``multi_scorer`` of Inspect's own model-graded scorers (letter judges) with the ``mode`` reducer
for a majority and ``mean`` for a mean; Inspect's reducers have no minimum and no weights. Every
other platform holds one judge per grader and refuses a jury by name.
"""

from __future__ import annotations

from studio.core.kinds import kind_of
from studio.core.models import Component, CompositeGrader, CriteriaJudge, JuryGrader, LetterJudge

#: the jury's aggregation -> Inspect's reducer name
INSPECT_REDUCERS = {"majority": "mode", "mean": "mean"}


def hud_composite(jury: JuryGrader) -> CompositeGrader | str:
    """The composite HUD's exporter writes for this jury, or why there is none."""
    if jury.aggregation == "majority":
        return "HUD's combine has no majority vote; set the jury's aggregation to mean, weighted or min"
    wrong = [j.label for j in jury.jurors if j.grader.kind != kind_of(CriteriaJudge)]
    if wrong:
        return (f"HUD's LLM judge is a criteria judge; juror {wrong[0]!r} is a "
                f"{next(j.grader.kind for j in jury.jurors if j.label == wrong[0]).replace('_', ' ')}")
    weighted = jury.aggregation == "weighted"
    return CompositeGrader(
        key=jury.key, name=jury.name, description=jury.description, metric=jury.metric, tags=jury.tags,
        mode="all" if jury.aggregation == "min" else "weighted",
        components=[Component(name=name, weight=j.weight if weighted else 1.0, grader=j.grader)
                    for name, j in zip(jury.juror_names(), jury.jurors, strict=True)],
    )


def inspect_problem(jury: JuryGrader) -> str | None:
    """Why Inspect cannot hold this jury, or None when a multi_scorer can."""
    if jury.aggregation not in INSPECT_REDUCERS:
        return (f"Inspect's multi_scorer reducers have no {jury.aggregation} aggregation; "
                "use majority (reducer mode) or mean")
    wrong = [j for j in jury.jurors if j.grader.kind != kind_of(LetterJudge)]
    if wrong:
        return (f"Inspect's model-graded scorers are letter judges; juror {wrong[0].label!r} is a "
                f"{wrong[0].grader.kind.replace('_', ' ')}")
    return None
