"""Pre-built RAG judges: faithfulness (the 0.5 example of 000), context relevancy, answer relevancy."""

from __future__ import annotations

import json

import pytest

from studio.core.judges.render import render_prompt
from studio.core.models import PrebuiltJudge, Sample, Turn

WEB_DOCS = [
    Turn(role="document", content="Tim Berners-Lee created the first website."),
    Turn(role="document", content="Tim Berners-Lee invented the world wide web."),
]
WEB_SAMPLE = Sample(
    id="web",
    messages=[*WEB_DOCS, Turn(role="user", content="Who published the first website?")],
    completion="Tim Berners-Lee published the first website in August 1990.",
)
CLAIMS = [
    "Tim Berners-Lee created the first website.",
    "The first website was published in August 1990.",
]


def faithfulness(**fields) -> PrebuiltJudge:
    return PrebuiltJudge(key="faith", metric_type="faithfulness", endpoint="fake", **fields)


def test_faithfulness_reference_example_scores_half(endpoint, fake_judge, score) -> None:
    # the judge splits the one sentence into two atomic claims; the date is not in the context
    fake_judge.add_rule(r"atomic claims[\s\S]*August 1990", json.dumps(CLAIMS))
    [outcome] = score(faithfulness(), [WEB_SAMPLE])
    assert outcome.status == "ok", outcome.error
    assert outcome.score == 0.5
    claims = outcome.details["claims"]
    assert [c["claim"] for c in claims] == CLAIMS
    assert [c["verdict"] for c in claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert outcome.details["claims_from"] == "judge"
    assert (outcome.details["passed"], outcome.details["total"]) == (1, 2)


CASES = [
    # (context turns, completion, expected)
    (WEB_DOCS, "Tim Berners-Lee created the first website. He invented the world wide web.", 1.0),
    (WEB_DOCS, "Tim Berners-Lee created the first website. Bill Gates wrote it in Pascal.", 0.5),
    (
        WEB_DOCS,
        "Ada Lovelace built it. Bill Gates hosted it. Tim Berners-Lee created the first website.",
        1 / 3,
    ),
    # no document turns: the turns before the last user turn are the context
    (
        [
            Turn(role="user", content="Our office is in Lyon."),
            Turn(role="assistant", content="Noted."),
        ],
        "Your office is in Lyon. It opened in 1999.",
        0.5,
    ),
]


@pytest.mark.parametrize(("context", "completion", "expected"), CASES)
def test_faithfulness_counts_supported_claims(
    endpoint, score, context, completion, expected
) -> None:
    sample = Sample(
        id="s", messages=[*context, Turn(role="user", content="Tell me.")], completion=completion
    )
    [outcome] = score(faithfulness(), [sample])
    assert outcome.score == pytest.approx(expected)
    assert len(outcome.details["claims"]) == outcome.details["total"]


def test_faithfulness_without_context_is_skipped(endpoint, score) -> None:
    sample = Sample(id="s", messages=[Turn(role="user", content="Hi")], completion="Hello.")
    [outcome] = score(faithfulness(), [sample])
    assert outcome.status == "skipped"


def test_context_relevancy_one_verdict_per_document(endpoint, score) -> None:
    sample = Sample(
        id="s",
        messages=[
            Turn(role="document", content="The first website went online at CERN."),
            Turn(role="document", content="Bananas are rich in potassium."),
            Turn(role="user", content="Where did the first website go online?"),
        ],
        completion="At CERN.",
    )
    [outcome] = score(
        PrebuiltJudge(key="ctx", metric_type="context_relevancy", endpoint="fake"), [sample]
    )
    assert outcome.score == 0.5
    assert [d["verdict"] for d in outcome.details["documents"]] == ["RELEVANT", "IRRELEVANT"]


def test_answer_relevancy_one_verdict_per_statement(endpoint, score) -> None:
    sample = Sample(
        id="s",
        messages=[Turn(role="user", content="What is the capital of France?")],
        completion="Paris is the capital. It has great cheese [[judge:IRRELEVANT]]. It is on the Seine.",
    )
    [outcome] = score(
        PrebuiltJudge(key="ans", metric_type="answer_relevancy", endpoint="fake"), [sample]
    )
    assert outcome.score == pytest.approx(2 / 3)
    assert [s["ok"] for s in outcome.details["statements"]] == [True, False, True]


def test_render_shows_claim_split_and_verdict_calls() -> None:
    rendered = render_prompt(faithfulness(), WEB_SAMPLE)
    assert rendered.calls[0].label == "split into claims"
    assert "Tim Berners-Lee created the first website." in rendered.calls[1].messages[1].content
    assert rendered.notes
