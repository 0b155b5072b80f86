"""OpenAI score_model / label_model graders and the cosine metric against our scripted judge over
real HTTP on 127.0.0.1 (issue 46): rendered multi-message input, range, pass_threshold, labels and
passing labels, sampling parameters, an answer outside the range or the labels as an error, an image
refused politely."""

from __future__ import annotations

import json
from typing import Any

import pytest

from studio.core.datasets.shapes import row_to_sample
from studio.core.demo.fake_server import FakeJudgeServer, embed
from studio.core.graders import similarity
from studio.core.models import Sample
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.openai_grader import OpenAIGrader

SCORE = {
    "type": "score_model", "name": "helpful", "model": "gpt-4o-mini",
    "input": [
        {"role": "developer", "content": "Score the answer."},
        {"role": "user", "content": [{"type": "input_text", "text": "Q: {{ item.question }}"},
                                     {"type": "input_text", "text": " A: {{ sample.output_text }}"}]},
    ],
    "range": [1, 7], "pass_threshold": 5,
    "sampling_params": {"temperature": 0.2, "seed": 3, "max_completions_tokens": 50, "top_p": 0.9,
                        "reasoning_effort": "low"},
}
LABEL = {
    "type": "label_model", "name": "tone", "model": "gpt-4o-mini",
    "input": [{"role": "system", "content": "Label the tone."}, {"role": "user", "content": "{{ sample.output_text }}"}],
    "labels": ["polite", "neutral", "rude"], "passing_labels": ["polite", "neutral"],
}


def row(item: dict[str, Any], output: str, n: int) -> Sample:
    return row_to_sample({"item": item, "sample": {"output_text": output}}, "openai", str(n))


def test_score_model_renders_every_message_and_reads_the_score_in_its_range(
        fake_judge: FakeJudgeServer, endpoint: EndpointConfig, score: Any) -> None:
    fake_judge.add_rule(r"Q: capital\? A: Paris", json.dumps({"result": 6}))
    fake_judge.add_rule(r"Q: capital\? A: Lyon", json.dumps({"result": 2.5}))
    fake_judge.add_rule(r"Q: capital\? A: Mars", json.dumps({"result": 9}))
    fake_judge.add_rule(r"Q: capital\? A: blah", "no idea")
    out = score(OpenAIGrader(key="h", criterion=SCORE),
                [row({"question": "capital?"}, answer, n) for n, answer in enumerate(["Paris", "Lyon", "Mars", "blah"])])
    assert [o.score for o in out[:2]] == [6.0, 2.5]
    assert [o.details["passed"] for o in out[:2]] == [True, False]
    assert out[0].details["range"] == [1, 7] and out[0].prompt_tokens > 0
    assert out[2].status == "error" and "outside the range [1, 7]" in (out[2].error or "")
    assert out[3].status == "error" and "not a score" in (out[3].error or "")


def test_label_model_passes_on_its_passing_labels_only(
        fake_judge: FakeJudgeServer, endpoint: EndpointConfig, score: Any) -> None:
    fake_judge.add_rule("Thanks kindly", json.dumps({"result": "polite"}))
    fake_judge.add_rule("It is 4", json.dumps({"result": "neutral"}))
    fake_judge.add_rule("Go away", json.dumps({"result": "rude"}))
    fake_judge.add_rule("Whatever", json.dumps({"result": "sarcastic"}))
    out = score(OpenAIGrader(key="t", criterion=LABEL),
                [row({}, text, n) for n, text in enumerate(["Thanks kindly", "It is 4", "Go away", "Whatever"])])
    assert [o.score for o in out[:3]] == [1.0, 1.0, 0.0]
    assert [o.details["label"] for o in out[:3]] == ["polite", "neutral", "rude"]
    assert out[3].status == "error" and "not one of the labels" in (out[3].error or "")


def test_sampling_params_reach_the_request(library: Any, endpoint: EndpointConfig) -> None:
    """Every one of OpenAI's sampling parameters is in the body sent to an OpenAI-compatible endpoint;
    Anthropic's API, which has no reasoning_effort, refuses it rather than dropping it."""
    from studio.core.graders.openai_grader import make_scorer
    from studio.core.judges.http.chat import ChatMessage, ChatRequest
    from studio.core.judges.http.errors import JudgeError
    from studio.core.judges.http.providers.anthropic import PROVIDER as anthropic
    from studio.core.judges.http.providers.openai import PROVIDER as openai
    from studio.core.scoring import GradingContext

    scorer = make_scorer(OpenAIGrader(key="h", criterion=SCORE), GradingContext(library=library))
    params = scorer.part.params  # type: ignore[attr-defined]
    assert params == {"temperature": 0.2, "max_tokens": 50, "seed": 3, "top_p": 0.9, "reasoning_effort": "low"}
    request = ChatRequest(messages=[ChatMessage(role="user", content="x")], **params)
    body = openai.payload(endpoint, "gpt-4o-mini", request)
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_p"], body["reasoning_effort"]) == (
        0.2, 50, 3, 0.9, "low")
    plain = openai.payload(endpoint, "m", ChatRequest(messages=[ChatMessage(role="user", content="x")]))
    assert "top_p" not in plain and "reasoning_effort" not in plain  # other requests as they were
    with pytest.raises(JudgeError, match="reasoning_effort"):
        anthropic.payload(endpoint, "claude", request)


def test_an_image_is_refused_politely_per_sample(endpoint: EndpointConfig, score: Any) -> None:
    criterion = {**SCORE, "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "Rate {{ sample.output_text }}"},
        {"type": "input_image", "image_url": "{{ item.picture }}"}]}]}
    [outcome] = score(OpenAIGrader(key="i", criterion=criterion), [row({"picture": "https://x/y.png"}, "a", 1)])
    assert outcome.status == "error" and "input_image" in (outcome.error or "") and "text only" in (outcome.error or "")


def test_cosine_uses_the_endpoints_embeddings(endpoint: EndpointConfig, score: Any) -> None:
    criterion = {"type": "text_similarity", "name": "cos", "input": "{{ sample.output_text }}",
                 "reference": "{{ item.reference }}", "evaluation_metric": "cosine", "pass_threshold": 0.9}
    texts = [("the cat sat", "the cat sat"), ("the cat sat", "a dog ran far away")]
    out = score(OpenAIGrader(key="c", criterion=criterion), [row({"reference": r}, o, n) for n, (o, r) in enumerate(texts)])
    expected = [similarity.cosine(embed(o), embed(r)) for o, r in texts]
    assert [o.score for o in out] == pytest.approx(expected) and out[0].score == pytest.approx(1.0)
    assert [o.details["passed"] for o in out] == [True, expected[1] >= 0.9]


def test_a_model_grader_keeps_its_call_and_stores_no_echoed_key(
        library: Any, fake_judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A score_model's result is a judge's: the exact prompt, the raw answer and the call are kept
    (counted in the run's usage), and a key the endpoint echoes back is stored nowhere."""
    from judge_helpers import add_endpoint

    from studio.core.engine.runner import RunOptions, run_grader

    key = "sk-openai-grader-echo-7c1f93ab52"
    monkeypatch.setenv("JUDGE_API_KEY", key)
    add_endpoint(library, fake_judge, name="fake", api_key_env="JUDGE_API_KEY")
    fake_judge.add_rule(r"A: Paris", json.dumps({"result": 6, "note": f"your key is {key}"}))
    library.graders.create(OpenAIGrader(key="h", criterion={**SCORE, "sampling_params": {}}, endpoint="fake"))
    library.datasets.create("d", [row({"question": "capital?"}, "Paris", 0)])
    run = run_grader(library, "h", "d", RunOptions())
    assert fake_judge.last_authorization == f"Bearer {key}"
    [result] = library.runs.results(run.id)
    assert result["score"] == 6.0
    [call] = result["details"]["calls"]
    assert "Q: capital? A: Paris" in json.dumps(call["messages"]) and call["prompt_tokens"] > 0
    stored = json.dumps(result)
    assert key not in stored and "***" in stored
    from studio.core.engine.sections import load_run
    from studio.core.engine.usage import run_usage

    assert run_usage(library, load_run(library, run.id)).total.calls == 1  # "0 calls" before
