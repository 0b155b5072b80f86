"""How our scripted judge acts out a local model server (llama-cpp-python) for the tests.

A real local server differs from OpenAI in ways that broke judges before the client learned them:
it answers an unsupported field with HTTP 500 and a pydantic "validation error" body; started
without logits it refuses logprobs with 500; it serves one request at a time; it generates to the
end of its context when a request has no ``max_tokens``; and a small model nests its JSON unless
the request pins the schema. Each habit is off by default; tests switch on the ones they need.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from studio.core.json_types import JsonObject

from .fake_http import Reply, json_reply

#: what llama-cpp-python says for a logprobs request when it was started with --logits_all false
LOGPROBS_REFUSAL = "logprobs is not supported for models created with logits_all=False"


def validation_error(field: str, problem: str) -> Reply:
    """llama-cpp-python's answer to a field its request model does not accept: 500, not 4xx."""
    message = (
        f"1 validation error for CreateChatCompletionRequest\n{field}\n  {problem} "
        "[type=literal_error, input_type=dict]"
    )
    return json_reply(500, {"error": {"message": message, "type": "internal_server_error"}})


@dataclass
class LocalServerHabits:
    #: False: a logprobs request gets HTTP 500 (as llama-cpp-python with --logits_all false)
    logprobs: bool = True
    #: the ``response_format`` dialect understood: None any; "json_object_schema" as
    #: llama-cpp-python (json_schema refused with a validation error); "none" refuses the field
    structured: str | None = None
    #: at most this many requests served at once (the rest wait), announced at GET /props
    slots: int | None = None
    #: seconds a request without max_tokens takes (a model generating to its context's end)
    unbounded_seconds: float | None = None
    #: answer JSON nested one level deeper ({"response": {...}}) unless the schema is pinned
    nests_json: bool = False
    #: False: answers carry no ``usage`` block (some OpenAI-compatible servers and gateways)
    usage: bool = True

    def refusal(self, body: JsonObject) -> Reply | None:
        if body.get("logprobs") and not self.logprobs:
            return json_reply(500, {"error": {"message": LOGPROBS_REFUSAL, "type": "server_error"}})
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and self.structured is not None:
            kind = fmt.get("type")
            if self.structured == "none":
                return validation_error("response_format", "Extra inputs are not permitted")
            if self.structured == "json_object_schema" and kind not in ("text", "json_object"):
                return validation_error(
                    "response_format.type", "Input should be 'text' or 'json_object'"
                )
            if self.structured == "json_schema" and kind == "json_object" and "schema" in fmt:
                return json_reply(
                    400,
                    {
                        "error": {
                            "message": "Unrecognized request argument: schema",
                            "type": "invalid_request_error",
                        }
                    },
                )
        return None

    def pinned_schema(self, body: JsonObject) -> bool:
        fmt = body.get("response_format")
        if not isinstance(fmt, dict):
            return False
        return "schema" in fmt or isinstance(fmt.get("json_schema"), dict)

    def shape(self, text: str, body: JsonObject) -> str:
        """A small model's JSON: right fields, wrong nesting, unless the request pins the schema."""
        if not self.nests_json or self.pinned_schema(body):
            return text
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict):
            return json.dumps({"response": value})
        return text
