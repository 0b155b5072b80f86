"""A studio sample in the shape each platform's grader reads: the one implementation of the payloads.

Input is a sample as plain JSON data: the stored ``Sample`` JSON (``id``, ``messages``, ``completion``,
``expected``, ``metadata``, ``fields``; fields at their default may be missing). The worker builds
the payload from the sample text the studio sends as stored (the studio never parses samples for
these graders); the studio imports this module for the samples it already holds as objects.

Row fields (``fields``) pass through unchanged so graders written against a platform's own rows
(MKA1 ``item``, Letta ``rubric_vars``, promptfoo ``vars``) see what they would see there.
Stdlib only: this runs inside the sandbox.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep typing out of the worker's start-up
    from collections.abc import Callable

    from studio.core.json_types import JsonObject, JsonValue


def input_text(sample: JsonObject) -> str:
    """The last user message (``Sample.input_text``): what a person reads as 'the question'."""
    messages = sample.get("messages") or ()
    for turn in reversed(messages):
        if turn.get("role") == "user":
            content: str = turn.get("content", "")  # a Turn's content is text
            return content
    return messages[-1].get("content", "") if messages else ""


def _prompt(sample: JsonObject, fields: JsonObject) -> str:
    prompt = fields.get("prompt")
    return prompt if isinstance(prompt, str) else input_text(sample)


def adaptive(sample: JsonObject) -> JsonObject:
    turns = [[t["role"], t.get("content", "")] for t in sample.get("messages") or ()]
    completion = sample.get("completion")
    if completion is not None:
        turns.append(["assistant", completion])
    metadata = sample.get("metadata") or {}
    expected = sample.get("expected")
    if expected is not None and "expected" not in metadata:
        metadata = {**metadata, "expected": expected}
    return {"turns": turns, "metadata": metadata}


def _json_or_none(text: str) -> JsonValue:
    import json  # only OpenAI rows need it

    try:
        return json.loads(text)
    except ValueError:
        return None


def mka1_sample_dict(sample: JsonObject) -> JsonObject:
    f = sample.get("fields") or {}
    output = sample.get("completion") or ""
    if isinstance(f.get("item"), dict):  # an OpenAI row: OpenAI's sample, with output_json parsed
        given = f.get("sample")
        own = given if isinstance(given, dict) else {}
        return {**own, "output_text": output, "output_json": _json_or_none(output)}
    return {
        "output_text": output,
        "extracted_output": f.get("extracted_output", output),
        "model": f.get("model"),
        "prompt": _prompt(sample, f),
        "task_id": f.get("task_id"),
        "run_id": f.get("run_id"),
        "sample_id": sample["id"],
    }


def mka1_item(sample: JsonObject) -> JsonObject:
    """MKA1's item: the dataset row with MKA1's keys filled in. An OpenAI-shaped row ({"item": ...,
    "sample": ...}) gives its own ``item`` exactly, as OpenAI passes it to ``grade(sample, item)``."""
    f = sample.get("fields") or {}
    if isinstance(f.get("item"), dict):
        return dict(f["item"])
    expected = sample.get("expected")
    item = dict(f)
    item.setdefault("prompt", _prompt(sample, f))
    item.setdefault("target", expected)
    item.setdefault("reference_answer", expected)
    item.setdefault("choices", [])
    item.setdefault("task_id", f.get("task_id"))
    return item


def mka1_sample(sample: JsonObject) -> JsonObject:
    return {"sample": mka1_sample_dict(sample), "item": mka1_item(sample)}


def mka1_batch_entry(sample: JsonObject) -> JsonObject:
    f = sample.get("fields") or {}
    output = sample.get("completion") or ""
    return {
        "sample_id": sample["id"],
        "task_id": f.get("task_id"),
        "model": f.get("model"),
        "prompt": _prompt(sample, f),
        "target": sample.get("expected"),
        "output_text": output,
        "extracted_output": f.get("extracted_output", output),
        "dataset_row": dict(f),
        "response_id": f.get("response_id"),
        "scores": {},
        "judge": None,
    }


def letta(sample: JsonObject, submission: str | None = None) -> JsonObject:
    """``submission`` is what a Letta extractor picked (the studio runs extractors); by default the
    completion."""
    f = sample.get("fields") or {}
    return {
        "sample": {
            "id": sample["id"],
            "input": f["input"] if "input" in f else input_text(sample),
            "ground_truth": sample.get("expected"),
            "metadata": sample.get("metadata") or {},
            "rubric_vars": f.get("rubric_vars") or {},
            "agent_args": f.get("agent_args") or {},
            "extra_vars": f.get("extra_vars") or {},
        },
        "submission": (sample.get("completion") or "") if submission is None else submission,
    }


def promptfoo(sample: JsonObject) -> JsonObject:
    f = sample.get("fields") or {}
    variables = dict(f.get("vars") or f)
    expected = sample.get("expected")
    if expected is not None:
        variables.setdefault("expected", expected)
    return {
        "output": sample.get("completion") or "",
        "context": {
            "prompt": _prompt(sample, f),
            "vars": variables,
            "test": {"vars": variables, "metadata": sample.get("metadata") or {}},
            "config": {},
        },
    }


BUILDERS: dict[str, Callable[[JsonObject], JsonObject]] = {
    "adaptive": adaptive,
    "mka1_sample": mka1_sample,
    "mka1_batch": mka1_batch_entry,
    "letta": letta,
    "promptfoo": promptfoo,
}

#: contracts whose payload holds nothing twice: no copy needed to match a payload sent as JSON
_UNSHARED = frozenset({"adaptive"})


def _fresh(value: JsonValue) -> JsonValue:
    """A copy with no container shared, as if the payload had travelled as JSON on its own."""
    kind = type(value)
    if kind is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if kind is list:
        return [_fresh(v) for v in value]
    return value


def builder(contract: str) -> Callable[[JsonObject], JsonObject]:
    """The worker's builder: payloads exactly as if each had been built apart and sent as JSON."""
    make = BUILDERS[contract]
    if contract in _UNSHARED:
        return make
    return lambda sample: _fresh(make(sample))
