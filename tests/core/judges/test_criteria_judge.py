"""Criteria judge (HUD): MET/UNMET per criterion, negative weights as errors, clamp(sum(v*w)/sum(w+))."""

from __future__ import annotations

import pytest
from judge_helpers import qa

from studio.core.models import CriteriaJudge, Criterion


def judge(*criteria: tuple[str, float]) -> CriteriaJudge:
    return CriteriaJudge(
        key="hud", endpoint="fake", criteria=[Criterion(text=t, weight=w) for t, w in criteria]
    )


CASES = [
    # (criteria with scripted verdicts, expected value)
    ([("A [[judge:MET]]", 1.0), ("B [[judge:MET]]", 1.0)], 1.0),
    ([("A [[judge:MET]]", 1.0), ("B [[judge:UNMET]]", 1.0)], 0.5),
    ([("A [[judge:MET]]", 3.0), ("B [[judge:UNMET]]", 1.0)], 0.75),
    # an error criterion that is MET (the error is present) subtracts its weight
    (
        [("A [[judge:MET]]", 1.0), ("B [[judge:MET]]", 1.0), ("Wrong year [[judge:MET]]", -0.5)],
        0.75,
    ),
    # an error criterion that is UNMET costs nothing
    ([("A [[judge:MET]]", 1.0), ("Wrong year [[judge:UNMET]]", -0.5)], 1.0),
    # penalties beyond the positive total clamp at 0
    ([("A [[judge:UNMET]]", 1.0), ("Bad [[judge:MET]]", -2.0)], 0.0),
]


@pytest.mark.parametrize(("criteria", "expected"), CASES)
def test_weighted_verdicts(endpoint, score, criteria, expected) -> None:
    [outcome] = score(judge(*criteria), [qa("s", "Who invented the web?", "Tim Berners-Lee.")])
    assert outcome.status == "ok", outcome.error
    assert outcome.score == pytest.approx(expected)
    verdicts = outcome.details["criteria"]
    assert [v["weight"] for v in verdicts] == [w for _, w in criteria]
    assert all(v["verdict"] in ("MET", "UNMET") and v["reasoning"] for v in verdicts)


def test_rule_based_verdicts_and_the_error_prompt(endpoint, score) -> None:
    hud = judge(("Names 'Berners-Lee'", 1.0), ("Mentions 'CERN'", 1.0), ("Claims 'Gates'", -1.0))
    [outcome] = score(hud, [qa("s", "Who invented the web?", "Tim Berners-Lee, at CERN.")])
    assert [v["met"] for v in outcome.details["criteria"]] == [True, True, False]
    assert outcome.score == 1.0
    error_call = outcome.details["calls"][-1]["messages"][0]["content"]
    assert "describes a MISTAKE" in error_call


def test_no_positive_weight_is_an_error(endpoint, score) -> None:
    [outcome] = score(judge(("Bad [[judge:UNMET]]", -1.0)), [qa("s", "q", "a")])
    assert outcome.status == "error" and "positive weight" in outcome.error


def test_one_failed_criterion_call_fails_the_sample_only(endpoint, score) -> None:
    hud = judge(("A [[judge:MET]]", 1.0), ("B [[fault:500]]", 1.0))
    [bad] = score(hud, [qa("s", "q", "a")])
    assert bad.status == "error" and "HTTP 500" in bad.error
    assert bad.details["criteria"][0]["verdict"] == "MET"  # the verdicts that did arrive are kept
