"""What each judge call's answer looks like: a token budget and, where it is JSON, its exact schema.

Why budgets: a call without ``max_tokens`` lets a local server (llama.cpp) generate to the end of
its context, minutes on a small CPU, while the client times out and asks again. Every judge call
therefore carries a budget suited to its answer; a ``max_tokens`` on the judge or on the endpoint
overrides it. Why schemas: small models answer valid but differently nested JSON; asking for the
exact schema (see ``structured``) makes a parse error the model's fault, not the request's.
"""

from __future__ import annotations

from studio.core.json_types import JsonObject

#: a verdict with a few sentences of reasoning (binary, criteria, pre-built items)
VERDICT_TOKENS = 512
#: a score with a rationale (rubric)
RUBRIC_TOKENS = 512
#: free reasoning before the range judge's score call
REASONING_TOKENS = 768
#: the list of atomic claims of one response
CLAIMS_TOKENS = 768
#: anything else (the model bridge of function graders)
DEFAULT_TOKENS = 1024


def verdict_schema(verdicts: tuple[str, ...]) -> JsonObject:
    """``{"reasoning": str, "verdict": one of verdicts}``: what ``parse_verdict`` reads first."""
    return {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": list(verdicts)},
        },
        "required": ["reasoning", "verdict"],
    }


RUBRIC_ANSWER: JsonObject = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string"},
    },
    "required": ["score", "rationale"],
}

CLAIMS_ANSWER: JsonObject = {"type": "array", "items": {"type": "string"}}
