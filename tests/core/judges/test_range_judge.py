"""Range judge: logprob-weighted mean over the range's integers (the 0.7875 example), fallbacks."""

from __future__ import annotations

import math

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.judges.http.chat import ChatResponse, TokenLogprob
from studio.core.judges.kinds.range_judge import logprob_score
from studio.core.judges.render import render_prompt
from studio.core.models import RangeJudge, RangeShot, Subrange, Turn

JUDGE = RangeJudge(
    key="quality",
    criteria="How complete and correct is the answer?",
    endpoint="fake",
    evaluation_steps=["Check correctness.", "Check completeness."],
    subrange_expectations=[
        Subrange(min=1, max=2, expectation="wrong or off-topic"),
        Subrange(min=3, max=3, expectation="adequate"),
        Subrange(min=4, max=5, expectation="thorough and correct"),
    ],
)

CASES = [
    # (probabilities of 1..5, expected normalised score)
    ("0.05,0.05,0.1,0.3,0.5", 0.7875),  # clients.md: raw 4.15 -> 0.7875
    ("1,0,0,0,0", 0.0),
    ("0,0,0,0,1", 1.0),
    ("0.2,0.2,0.2,0.2,0.2", 0.5),
    ("0.5,0,0,0,0.5", 0.5),
]


@pytest.mark.parametrize(("probs", "expected"), CASES)
def test_logprob_weighted_score(endpoint, score, probs, expected) -> None:
    [outcome] = score(JUDGE, [qa("s", "Explain X.", f"An answer [[judge:probs={probs}]]")])
    assert outcome.status == "ok", outcome.error
    assert outcome.score == expected
    assert outcome.details["method"] == "logprobs"
    assert outcome.rationale  # the reasoning call's text
    assert [c["label"] for c in outcome.details["calls"]] == ["reasoning", "score"]


def test_the_worked_example_raw_score() -> None:
    probs = [0.05, 0.05, 0.1, 0.3, 0.5]
    top = {str(s): math.log(p) for s, p in zip(range(1, 6), probs, strict=True)}
    response = ChatResponse(
        text="SCORE: 5", logprobs=[TokenLogprob(token="5", logprob=top["5"], top=top)]
    )
    dist = logprob_score(response, 1, 5)
    assert dist is not None
    assert sum(s * p for s, p in dist.items()) == pytest.approx(4.15, abs=1e-12)


def test_softmax_is_over_the_range_integers_only() -> None:
    # tokens outside the range ("0", "6", words) are ignored and the rest renormalised
    top = {
        "4": math.log(0.3),
        "5": math.log(0.3),
        "6": math.log(0.2),
        "0": math.log(0.1),
        "five": math.log(0.1),
    }
    response = ChatResponse(
        text="SCORE: 4",
        logprobs=[
            TokenLogprob(token="SCORE", logprob=0.0, top={"SCORE": 0.0}),
            TokenLogprob(token=":", logprob=0.0, top={":": 0.0}),
            TokenLogprob(token=" 4", logprob=top["4"], top=top),
        ],
    )
    assert logprob_score(response, 1, 5) == pytest.approx({4: 0.5, 5: 0.5})


def test_unnormalised_and_other_ranges(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge)
    judge = RangeJudge(
        key="ten",
        criteria="c",
        endpoint="fake",
        score_range=(0, 10),
        normalize=False,
        evaluation_steps=["x"],
    )
    [outcome] = score(judge, [qa("s", "q", "a [[judge:score=7]]")])
    # 0.8 on 7, 0.02 on each of the ten others
    expected = 0.8 * 7 + 0.02 * (sum(range(11)) - 7)
    assert outcome.score == pytest.approx(expected)


def test_fallback_samples_when_the_endpoint_has_no_logprobs(library, score) -> None:
    from studio.core.demo.fake_server import FakeJudgeServer

    with FakeJudgeServer(logprobs=False) as server:
        add_endpoint(library, server)
        [outcome] = score(JUDGE, [qa("s", "q", "a [[judge:score=4]]")])
        assert outcome.status == "ok"
        assert outcome.details["method"] == "sampled"
        assert outcome.details["sampled_scores"] == [4, 4, 4, 4, 4]
        assert outcome.score == 0.75
        [single] = score(JUDGE, [qa("s", "q", "a [[judge:score=2]]")], options={"score_samples": 1})
        assert single.details["method"] == "parsed" and single.score == 0.25


def test_steps_are_generated_once_and_cached(endpoint, score, fake_judge) -> None:
    judge = JUDGE.model_copy(update={"evaluation_steps": None})
    samples = [qa(str(i), "q", f"answer {i} [[judge:score=3]]") for i in range(4)]
    outcomes = score(judge, samples)
    assert all(o.status == "ok" and o.score == 0.5 for o in outcomes)
    assert all(o.details["steps_generated"] for o in outcomes)
    assert len({tuple(o.details["evaluation_steps"]) for o in outcomes}) == 1
    labels = [c["label"] for o in outcomes for c in o.details["calls"]]
    assert labels.count("evaluation steps") == 1
    calls = fake_judge.requests["/v1/chat/completions"]
    assert calls == 1 + 2 * len(samples)
    again = score(judge, samples)
    assert fake_judge.requests["/v1/chat/completions"] == calls  # steps and scores from the cache
    assert all(o.cached for o in again)


def test_render_shows_every_call_with_shots() -> None:
    judge = JUDGE.model_copy(
        update={
            "evaluation_steps": None,
            "shots": [
                RangeShot(
                    messages=[Turn(role="user", content="Explain Y.")],
                    completion="Short.",
                    reasoning="Too brief.",
                    score=1,
                )
            ],
        }
    )
    rendered = render_prompt(judge, qa("s", "Explain X.", "An answer."))
    assert [c.label.split(" (")[0] for c in rendered.calls] == [
        "evaluation steps",
        "reasoning",
        "score",
    ]
    assert "1 to 2: wrong or off-topic" in rendered.messages[0].content
    score_call = rendered.calls[-1].messages
    assert score_call[-1].content.startswith("Now give your score")
    assert any(m.content == "SCORE: 1" for m in score_call)  # the shot's score turn


def test_the_score_token_is_the_one_after_score_colon() -> None:
    def tok(text: str, top: dict[str, float] | None = None) -> TokenLogprob:
        return TokenLogprob(token=text, logprob=0.0, top=top or {text: 0.0})

    response = ChatResponse(
        text="Step 3 done. SCORE: 4",
        logprobs=[
            tok("Step"),
            tok(" 3", {" 3": 0.0, " 2": -1.0}),
            tok(" done."),
            tok(" SCORE"),
            tok(":"),
            tok(" 4", {" 4": math.log(0.75), " 5": math.log(0.25)}),
        ],
    )
    assert logprob_score(response, 1, 5) == pytest.approx({4: 0.75, 5: 0.25})
