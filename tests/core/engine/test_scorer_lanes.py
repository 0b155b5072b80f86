"""One scorer interface: the engine calls the lanes a scorer declares (``Scorer.lanes``), each within
its kind's descriptor (``Kind.lanes``), and never probes for methods."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from studio.core.graders import registry
from studio.core.kinds import get_kind
from studio.core.models import Outcome, Sample, parse_grader
from studio.core.scoring import LANES, SAMPLES, GradingContext, LaneNotDeclared, Scorer, ScorerBase


class _Claims(ScorerBase):
    lanes = SAMPLES | {"raw"}

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return [Outcome.scored(1.0) for _ in samples]


def test_a_scorer_claiming_a_lane_its_kind_does_not_declare_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "factory_for", lambda kind: lambda grader, ctx: _Claims())
    grader = parse_grader({"kind": "builtin", "key": "exact", "function": "exact_match"})
    with pytest.raises(TypeError, match="builtin scorer takes lanes its kind does not declare: raw"):
        registry.make_scorer(grader, GradingContext())


def test_every_lane_is_declared_on_the_interface_and_an_undeclared_one_refuses() -> None:
    scorer = _Claims()
    assert isinstance(scorer, Scorer)
    with pytest.raises(LaneNotDeclared):
        asyncio.run(scorer.score_texts([]))
    with pytest.raises(LaneNotDeclared):
        asyncio.run(scorer.score_raw_rows(1, []))


def test_the_kinds_lanes_are_known_lanes_and_the_builtin_scorer_declares_its_own() -> None:
    for name in ("function", "builtin", "binary_judge", "composite"):
        assert "samples" in get_kind(name).lanes and set(get_kind(name).lanes) <= set(LANES), name
    exact = registry.make_scorer(parse_grader({"kind": "builtin", "key": "e", "function": "exact_match"}),
                                 GradingContext())
    assert exact.lanes == {"samples", "values", "texts"}
