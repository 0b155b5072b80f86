from __future__ import annotations

import asyncio

import pytest

from studio.core.graders.composite import combine, make_scorer, unique_names
from studio.core.models import BuiltinGrader, BuiltinOptions, Component, CompositeGrader, Sample
from studio.core.scoring import GradingContext


def test_hud_combine_rules() -> None:
    reward, weights = combine("weighted", [("a", 2.0, 1.0), ("b", 2.0, 0.5), ("p", -0.25, 1.0)])
    assert weights == {"a": 0.5, "b": 0.5, "p": -0.25}
    assert reward == pytest.approx(0.5 + 0.25 - 0.25)
    assert combine("any", [("a", 1, 0.2), ("b", 1, 0.9)])[0] == 0.9
    assert combine("all", [("a", 1, 0.2), ("b", 1, 0.9)])[0] == 0.2
    assert unique_names(["x", "x", "y", "x"]) == ["x-1", "x-2", "y", "x-3"]  # HUD


def test_composite_scores_with_penalty() -> None:
    grader = CompositeGrader(key="c", components=[
        Component(name="correct", grader=BuiltinGrader(key="a", function="contains")),
        Component(name="apology", weight=-0.5, grader=BuiltinGrader(
            key="b", function="contains", options=BuiltinOptions(reference="sorry"))),
    ])
    scorer = make_scorer(grader, GradingContext())
    out = asyncio.run(scorer.score_batch([
        Sample(id="1", completion="Paris", expected="Paris"),
        Sample(id="2", completion="Sorry, Paris", expected="Paris"),
        Sample(id="3", completion="London", expected="Paris"),
    ]))
    assert [o.score for o in out] == [1.0, 0.5, 0.0]
    assert out[1].scores == {"correct": 1.0, "apology": 1.0, "score": 0.5}
    assert out[1].details["components"][1]["effective_weight"] == -0.5
