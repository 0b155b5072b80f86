"""An endpoint provider from outside the studio, in one file: a made-up chat API (``POST {base}/ask``,
the key in ``X-Toy-Key``, the answer in ``reply`` and its usage in ``spent``). ``PROVIDER`` is all the
studio needs; tests/test_adding_a_kind_and_provider.py registers this module under the
``grader_studio.providers`` entry point, as a package's metadata would."""

from __future__ import annotations

from typing import Any

from studio.core.judges.http.adapters import (
    MalformedResponse,
    answer_budget,
    token_count,
    usage_reported,
)
from studio.core.judges.http.chat import ChatRequest, ChatResponse
from studio.core.judges.http.providers import Provider
from studio.core.models.endpoints import EndpointConfig


class ToyApi(Provider):
    name = "toy_api"
    label = "Toy API"
    path = "ask"

    def payload(self, config: EndpointConfig, model: str, request: ChatRequest) -> dict[str, Any]:
        return {"model": model, "turns": [[m.role, m.content] for m in request.messages],
                "budget": answer_budget(config, request)}

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"X-Toy-Key": api_key} if api_key else {}

    def parse(self, body: Any) -> ChatResponse:
        if not isinstance(body, dict) or not isinstance(body.get("reply"), str):
            raise MalformedResponse("no reply in the toy API's answer")
        spent = body.get("spent") or {}
        return ChatResponse(text=body["reply"], logprobs=None, prompt_tokens=token_count(spent, "in"),
                            completion_tokens=token_count(spent, "out"),
                            usage_reported=usage_reported(spent, "in", "out"), raw=body)

    def answer(self, text: str, logprobs: bool) -> dict[str, Any]:
        return {"reply": text, "spent": {}}


PROVIDER = ToyApi()
