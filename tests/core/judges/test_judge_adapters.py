"""Provider adapters: OpenAI-compatible bodies (OpenAI, vLLM, Ollama, llama.cpp) and Anthropic messages."""

from __future__ import annotations

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.judges.http.adapters import MalformedResponse
from studio.core.judges.http.chat import ChatRequest, assistant, system, user
from studio.core.judges.http.providers.anthropic import PROVIDER as AnthropicAdapter
from studio.core.judges.http.providers.openai import PROVIDER as OpenAIAdapter
from studio.core.models import BinaryJudge, RangeJudge
from studio.core.models.endpoints import EndpointConfig


def test_payload_shape() -> None:
    config = EndpointConfig(
        name="a", kind="anthropic", base_url="https://api.example.com", model="m"
    )
    request = ChatRequest(
        messages=[system("S1"), system("S2"), user("U1"), user("U2"), assistant("A")],
        temperature=1.5,
    )
    body = AnthropicAdapter.payload(config, "m", request)
    assert body["system"] == "S1\n\nS2"
    assert body["messages"] == [
        {"role": "user", "content": "U1\n\nU2"},
        {"role": "assistant", "content": "A"},
    ]
    assert body["max_tokens"] == 1024 and body["temperature"] == 1.0
    assert config.url_for("messages") == "https://api.example.com/v1/messages"
    assert AnthropicAdapter.headers("k")["x-api-key"] == "k"


def test_judges_through_the_messages_api(library, fake_judge, score) -> None:
    add_endpoint(library, fake_judge, name="claude", kind="anthropic", base_url=fake_judge.url)
    [passed, failed] = score(
        BinaryJudge(key="b", criteria="c", endpoint="claude"),
        [qa("a", "Capital?", "Paris", "Paris"), qa("b", "Capital?", "Lyon", "Paris")],
    )
    assert (passed.score, failed.score) == (1.0, 0.0)
    assert passed.prompt_tokens > 0
    [ranged] = score(
        RangeJudge(key="r", criteria="c", endpoint="claude", evaluation_steps=["x"]),
        [qa("a", "q", "a [[judge:score=5]]")],
    )
    assert ranged.details["method"] == "sampled" and ranged.score == 1.0
    assert fake_judge.requests["/v1/messages"] > 0


LLAMA_CPP_BODY = {
    "choices": [
        {
            "finish_reason": "stop",
            "index": 0,
            "message": {"role": "assistant", "content": "4"},
            "logprobs": {
                "content": [
                    {
                        "id": 19,
                        "token": "4",
                        "bytes": [52],
                        "logprob": -0.25,
                        "top_logprobs": [
                            {"id": 19, "token": "4", "bytes": [52], "logprob": -0.25},
                            {"id": 20, "token": "5", "bytes": [53], "logprob": -1.6},
                            {"id": 18, "token": "3", "bytes": [51], "logprob": -3.2},
                        ],
                    }
                ]
            },
        }
    ],
    "created": 1763870000,
    "model": "qwen2.5-0.5b-instruct-q4_k_m.gguf",
    "object": "chat.completion",
    "usage": {"completion_tokens": 1, "prompt_tokens": 87, "total_tokens": 88},
    "id": "chatcmpl-abc",
    "timings": {"prompt_n": 87, "predicted_n": 1},
}


def test_openai_compatible_bodies() -> None:
    response = OpenAIAdapter.parse(LLAMA_CPP_BODY)
    assert response.text == "4"
    assert response.logprobs is not None
    assert response.logprobs[0].top == {"4": -0.25, "5": -1.6, "3": -3.2}
    assert (response.prompt_tokens, response.completion_tokens) == (87, 1)
    # Ollama and servers without logprobs: no logprobs block, content may be null
    plain = OpenAIAdapter.parse(
        {"choices": [{"message": {"role": "assistant", "content": None}}]}
    )
    assert plain.text == "" and plain.logprobs is None
    for broken in ({}, {"choices": []}, {"choices": [{"text": "legacy"}]}, ["not", "an", "object"]):
        with pytest.raises(MalformedResponse):
            OpenAIAdapter.parse(broken)


def test_openai_payload() -> None:
    config = EndpointConfig(name="o", base_url="http://127.0.0.1:8080/v1", model="m", max_tokens=64)
    request = ChatRequest(messages=[user("hi")], logprobs=True, seed=3, json_mode=True)
    body = OpenAIAdapter.payload(config, "m", request)
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 64,
        "logprobs": True,
        "top_logprobs": 20,
        "seed": 3,
        "response_format": {"type": "json_object"},
    }
    assert config.url_for("chat/completions") == "http://127.0.0.1:8080/v1/chat/completions"
