"""Binary judge: PASS 1.0, FAIL 0.0, NA skipped; few-shot examples; the rendered prompt is what is sent."""

from __future__ import annotations

import pytest
from judge_helpers import qa

from studio.core.judges.render import render_prompt
from studio.core.models import BinaryJudge, BinaryShot, Turn

JUDGE = BinaryJudge(
    key="correct", criteria="The response gives the correct capital city.", endpoint="fake"
)

CASES = [
    # (completion, expected, status, score, verdict)
    ("The capital is Paris.", "Paris", "ok", 1.0, "PASS"),
    ("The capital is Lyon.", "Paris", "ok", 0.0, "FAIL"),
    ("Paris [[judge:FAIL]]", "Paris", "ok", 0.0, "FAIL"),
    ("Lyon [[judge:PASS]]", "Paris", "ok", 1.0, "PASS"),
    ("Not a geography question [[judge:NA]]", None, "skipped", None, "NA"),
]


@pytest.mark.parametrize(("completion", "expected", "status", "value", "verdict"), CASES)
def test_verdicts_map_to_scores(
    endpoint, score, completion, expected, status, value, verdict
) -> None:
    [outcome] = score(JUDGE, [qa("s1", "What is the capital of France?", completion, expected)])
    assert outcome.status == status
    assert outcome.score == value
    assert outcome.details["verdict"] == verdict
    assert outcome.rationale  # the judge's reasoning is kept
    assert outcome.details["calls"][0]["messages"][0]["role"] == "system"
    assert outcome.raw["choices"][0]["message"]["content"]  # the raw response is kept
    assert outcome.prompt_tokens > 0 and outcome.completion_tokens > 0


def test_na_is_left_out_not_zero(endpoint, score) -> None:
    outcomes = score(
        JUDGE,
        [
            qa("a", "Capital of France?", "Paris", "Paris"),
            qa("b", "Tell me a joke", "A joke [[judge:NA]]"),
        ],
    )
    counted = [o.score for o in outcomes if o.status == "ok"]
    assert counted == [1.0]
    assert outcomes[1].status == "skipped" and outcomes[1].score is None


def test_few_shot_examples_are_sent_as_turns(endpoint, score, fake_judge) -> None:
    judge = JUDGE.model_copy(
        update={
            "examples": [
                BinaryShot(
                    messages=[Turn(role="user", content="Capital of Italy?")],
                    completion="Rome",
                    reasoning="Rome is correct.",
                    verdict="PASS",
                ),
                BinaryShot(
                    messages=[Turn(role="user", content="Capital of Spain?")],
                    completion="Seville",
                    reasoning="Madrid is the capital.",
                    verdict="FAIL",
                ),
            ]
        }
    )
    sample = qa("s", "Capital of France?", "Paris", "Paris")
    rendered = render_prompt(judge, sample)
    roles = [m.role for m in rendered.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert '"verdict": "FAIL"' in rendered.messages[4].content
    [outcome] = score(judge, [sample])
    assert outcome.score == 1.0
    sent = outcome.details["calls"][0]["messages"]
    assert [m["content"] for m in sent] == [m.content for m in rendered.messages]


def test_custom_templates_with_adaptive_variables(endpoint, score) -> None:
    judge = JUDGE.model_copy(
        update={
            "system_template": "Judge by: {{criteria}}. Reply as {{{output_schema}}} with PASS or FAIL.",
            "user_template": "Q: {{{last_user_turn_content}}}\n<response>{{{completion}}}</response>\n"
            "<reference>{{{metadata.expected}}}</reference>",
        }
    )
    [outcome] = score(judge, [qa("s", "Capital of France?", "It's Paris", "Paris")])
    assert outcome.status == "ok" and outcome.score == 1.0
    user_text = outcome.details["calls"][0]["messages"][-1]["content"]
    assert user_text.startswith("Q: Capital of France?")


def test_unknown_variable_is_a_sample_error_naming_it(endpoint, score, fake_judge) -> None:
    judge = JUDGE.model_copy(update={"user_template": "{{{completion}}} {{{respons}}}"})
    [outcome] = score(judge, [qa("s", "Q", "A")])
    assert outcome.status == "error"
    assert "'respons'" in outcome.error
    assert fake_judge.requests["/v1/chat/completions"] == 0
