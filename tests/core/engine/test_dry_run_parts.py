"""The dry run counts every part of a grader that calls an endpoint with the user's key, not only
the prompt judges: an OpenAI criterion's model calls (score_model, label_model in a multi) and a
cosine similarity's embeddings calls are counted as a run would make them; a function grader's
``ctx`` helpers, whose calls its code decides, are named as not counted, never as free."""

from __future__ import annotations

from studio.core.engine.dry_run import dry_run
from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.openai_grader import OpenAIGrader
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

SAMPLES = 7
RATE = {"type": "score_model", "name": "s", "model": "gpt-4o-mini", "range": [0, 1],
        "input": [{"role": "user", "content": "Rate {{sample.output_text}}"}]}


def _library(library: Library) -> Library:
    EndpointRepository.of(library).save(EndpointConfig(name="p", base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini",
                                                       price_input="0.15", price_output="0.60"))
    library.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content=f"question {i}")],
                                          completion=f"answer {i}", expected="answer") for i in range(SAMPLES)])
    return library


def test_an_openai_model_criterion_is_counted_call_by_call(library: Library) -> None:
    lib = _library(library)
    lib.graders.create(OpenAIGrader(key="rate", criterion=RATE, endpoint="p"))
    lib.graders.create(OpenAIGrader(key="labels", endpoint="p", criterion={
        "type": "multi", "name": "m", "calculate_output": "a + b", "graders": {
            "a": RATE, "b": {"type": "label_model", "name": "l", "model": "gpt-4o-mini", "labels": ["good", "bad"],
                             "passing_labels": ["good"], "input": [{"role": "user", "content": "{{sample.output_text}}"}]}}}))
    [rate] = dry_run(lib, "rate", "qa")
    assert rate.calls == SAMPLES and rate.prompt_tokens > 0 and rate.max_completion_tokens > 0
    assert list(rate.endpoints) == ["p"] and rate.cost_range() is not None and rate.cost_range()[1] > 0
    [labels] = dry_run(lib, "labels", "qa")
    assert labels.calls == 2 * SAMPLES  # each of the multi's two model graders, once a sample
    assert not any("nothing to pay for" in n for n in rate.notes + labels.notes)


def test_a_cosine_similarity_counts_its_embeddings_calls_and_no_completion(library: Library) -> None:
    lib = _library(library)
    lib.graders.create(OpenAIGrader(key="cos", endpoint="p", criterion={
        "type": "text_similarity", "name": "c", "evaluation_metric": "cosine",
        "input": "{{sample.output_text}}", "reference": "{{item.reference_answer}}"}))
    [cos] = dry_run(lib, "cos", "qa")
    assert cos.calls >= 1 and cos.prompt_tokens >= 2 * SAMPLES  # every answer and reference is embedded
    assert cos.max_completion_tokens == 0


def test_criteria_that_call_nothing_are_free_and_a_model_backed_function_is_named_not_counted(library: Library) -> None:
    lib = _library(library)
    lib.graders.create(OpenAIGrader(key="exact", criterion={"type": "string_check", "name": "e", "operation": "eq",
                                                            "input": "{{sample.output_text}}", "reference": "x"}))
    lib.graders.create(FunctionGrader(key="helper", source="def grade(sample, ctx):\n    return 1.0\n",
                                      model_access=True, endpoint="p"))
    [exact] = dry_run(lib, "exact", "qa")
    assert exact.calls == 0 and exact.notes == ["a openai_grader grader calls no endpoint: nothing to pay for"]
    [helper] = dry_run(lib, "helper", "qa")
    assert helper.calls == 0 and helper.cost_range() == (0, 0)
    assert len(helper.notes) == 1 and "helper: a function grader calls its endpoint as its code decides" in helper.notes[0]
    assert "nothing to pay for" not in helper.notes[0]
