"""The MKA1 model bridge: ctx.responses_create / ctx.embeddings_create served synchronously from threads."""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor

import pytest

from studio.core.judges.bridge import make_model_bridge
from studio.core.judges.http.errors import JudgeError

MKA1_JUDGE_INPUT = (
    "You are grading an answer. Return JSON only.\n"
    "Question: Capital of France?\n"
    "Reference: Paris\n"
    "Prediction: {prediction}\n"
    'Schema: {{"verdict":"correct"|"incorrect","rationale":"..."}}'
)


def test_responses_and_embeddings(library, endpoint, fake_judge) -> None:
    bridge = make_model_bridge(library, "fake")
    try:

        def grade(prediction: str) -> str:
            response = bridge(
                "responses_create",
                {
                    "model": "auto",
                    "input": MKA1_JUDGE_INPUT.format(prediction=prediction),
                    "temperature": 0,
                    "text": {"format": {"type": "json_object"}},
                },
            )
            assert response["model"] == "fake-judge"
            assert response["output"][0]["content"][0]["text"] == response["output_text"]
            return json.loads(response["output_text"])["verdict"]

        with ThreadPoolExecutor(4) as pool:  # the sandbox calls from worker threads
            verdicts = list(pool.map(grade, ["Paris", "Lyon", "Paris, France", "Rome"]))
        assert verdicts == ["correct", "incorrect", "correct", "incorrect"]

        result = bridge(
            "embeddings",  # the sandbox worker uses the short names
            {"model": "auto", "input": ["the cat sat", "the cat sat", "stocks fell"]},
        )
        a, b, c = (item["embedding"] for item in result["data"])
        cosine = lambda x, y: sum(p * q for p, q in zip(x, y, strict=True))  # noqa: E731 (unit vectors)
        assert math.isclose(cosine(a, b), 1.0) and cosine(a, c) < 0.9

        calls = fake_judge.requests["/v1/chat/completions"]
        again = bridge(
            "responses_create",
            {
                "input": MKA1_JUDGE_INPUT.format(prediction="Paris"),
                "temperature": 0,
                "text": {"format": {"type": "json_object"}},
                "model": "auto",
            },
        )
        assert again["cached"] and fake_judge.requests["/v1/chat/completions"] == calls

        with pytest.raises(JudgeError, match="unknown bridge method"):
            bridge("files_create", {})
    finally:
        bridge.close()  # type: ignore[attr-defined]


def test_a_forgotten_bridge_stops_its_thread(library, endpoint) -> None:
    import gc
    import threading

    bridge = make_model_bridge(library, None)  # the library's only endpoint
    assert bridge("responses_create", {"input": "Say OK"})["output_text"].startswith("OK")
    del bridge
    gc.collect()
    assert not [t for t in threading.enumerate() if t.name == "model-bridge"]
