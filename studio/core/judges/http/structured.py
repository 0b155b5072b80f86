"""Asking an OpenAI-compatible server for an exact JSON schema, in the dialect it understands.

Servers differ: OpenAI and vLLM take ``response_format: {type: json_schema, json_schema: {...}}``;
llama-cpp-python takes ``{type: json_object, schema: {...}}`` (and refuses ``json_schema``); others
know only ``json_object`` or nothing. The endpoint probe finds which one works and records it in
``EndpointConfig.structured_output``; the adapter then uses it for every call that has a schema.
"""

from __future__ import annotations

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models.endpoints import StructuredOutput

#: the order the probe tries them in: the most exact first
PROBE_ORDER: tuple[StructuredOutput, ...] = ("json_schema", "json_object_schema", "json_object")


def response_format(mode: str | None, schema: JsonObject | None, json_mode: bool) -> JsonValue:
    """The ``response_format`` field for one request, or None to send none."""
    if schema is not None:
        # OpenAI's structured outputs take an object at the root only; an array answer (claims)
        # is then asked for by the prompt alone rather than risk refusing the whole call
        if mode == "json_schema" and schema.get("type") == "object":
            return {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": False},
            }
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        if mode == "json_object" and schema.get("type") == "object":
            return {"type": "json_object"}
        if mode is None and json_mode:
            return {"type": "json_object"}
        return None
    return {"type": "json_object"} if json_mode and mode != "none" else None
