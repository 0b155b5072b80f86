"""Rubric judge (Letta): placeholders with Python format rules, JSON {score, rationale}, clamping, errors."""

from __future__ import annotations

import pytest
from judge_helpers import qa

from studio.core.judges.render import render_prompt
from studio.core.models import RubricJudge

PROMPT = "Grade the answer.\nQuestion: {input}\nExpected: {ground_truth}\nResponse: {submission}\n"
JUDGE = RubricJudge(key="rubric", prompt=PROMPT, endpoint="fake")

CASES = [
    # (completion, expected, status, score, rationale contains)
    ("It is Paris.", "Paris", "ok", 1.0, "Scripted"),
    ("It is Lyon.", "Paris", "ok", 0.0, "Scripted"),
    ("Partly right [[judge:score=0.7]]", "Paris", "ok", 0.7, "0.7"),
    ("Too generous [[judge:score=1.7]]", "Paris", "ok", 1.0, "1.7"),  # clamped to [0, 1]
    ("Too harsh [[judge:score=-2]]", "Paris", "ok", 0.0, "-2"),
]


@pytest.mark.parametrize(("completion", "expected", "status", "value", "why"), CASES)
def test_scores(endpoint, score, completion, expected, status, value, why) -> None:
    [outcome] = score(JUDGE, [qa("s", "Capital of France?", completion, expected)])
    assert (outcome.status, outcome.score) == (status, value)
    assert why in outcome.rationale


def test_clamping_is_recorded(endpoint, score) -> None:
    [outcome] = score(JUDGE, [qa("s", "q", "x [[judge:score=1.7]]", "y")])
    assert outcome.details["clamped"] is True


def test_placeholders_and_rubric_vars() -> None:
    judge = RubricJudge(
        key="r",
        prompt="Tone {tone}; literal {{braces}}; in={input}; gt={ground_truth}; out={submission}",
    )
    sample = qa("s", "Say hi", "Hello!", "Hi", fields={"rubric_vars": {"tone": "warm"}})
    user = render_prompt(judge, sample).messages[1].content
    assert user == "Tone warm; literal {braces}; in=Say hi; gt=Hi; out=Hello!"


def test_prompt_without_submission_gets_it_appended() -> None:
    judge = RubricJudge(key="r", prompt="Score 1.0 for creative answers, 0.0 for generic ones.")
    user = render_prompt(judge, qa("s", "Write a poem", "Roses are red")).messages[1].content
    assert user.endswith("Submission to grade:\nRoses are red")


def test_unknown_placeholder_is_an_error_naming_it(endpoint, score) -> None:
    judge = RubricJudge(key="r", prompt="Rate {submission} against {rubric_x}", endpoint="fake")
    [outcome] = score(judge, [qa("s", "q", "a")])
    assert outcome.status == "error"
    assert "'rubric_x'" in outcome.error
    assert outcome.score == 0.0 and outcome.rationale.startswith("Error:")  # Letta's rule


def test_a_reply_that_is_not_json_scores_zero_and_is_marked_error(
    endpoint, fake_judge, score
) -> None:
    fake_judge.add_rule("NOT-JSON-PLEASE", "I think it is decent, maybe 0.8.")
    [outcome] = score(JUDGE, [qa("s", "q", "NOT-JSON-PLEASE", "x")])
    assert outcome.status == "error"
    assert outcome.score == 0.0
    assert "not a JSON object" in outcome.rationale
    assert outcome.details["calls"][0]["response"] == "I think it is decent, maybe 0.8."


def test_endpoint_failure_scores_zero_and_is_marked_error(endpoint, score) -> None:
    [bad, good] = score(JUDGE, [qa("s", "q", "x [[fault:500]]", "x"), qa("t", "q", "x", "x")])
    assert bad.status == "error" and bad.score == 0.0 and "HTTP 500" in bad.rationale
    assert good.status == "ok" and good.score == 1.0


def test_empty_submission_scores_zero_without_calling_the_judge(endpoint, score) -> None:
    """letta-evals returns 0.0 for an empty submission before the model judge runs (issue 12)."""
    [outcome] = score(JUDGE, [qa("s", "Capital of France?", "", "Paris")])
    assert (outcome.status, outcome.score) == ("ok", 0.0)
    assert "Empty submission" in outcome.rationale
    assert outcome.prompt_tokens == 0
