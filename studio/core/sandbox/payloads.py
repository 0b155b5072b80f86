"""A studio Sample in the shape each platform's grader reads (built in the parent, sent as JSON).

Row fields (``Sample.fields``) pass through unchanged so graders written against a platform's own
rows (MKA1 ``item``, Letta ``rubric_vars``, promptfoo ``vars``) see what they would see there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from studio.core.models import Extractor, Sample


def adaptive(sample: Sample) -> dict[str, Any]:
    turns = [[t.role, t.content] for t in sample.messages]
    if sample.completion is not None:
        turns.append(["assistant", sample.completion])
    metadata = sample.metadata
    if sample.expected is not None and "expected" not in metadata:
        metadata = {**metadata, "expected": sample.expected}
    return {"turns": turns, "metadata": metadata}


def _prompt(sample: Sample) -> str:
    prompt = sample.fields.get("prompt")
    return prompt if isinstance(prompt, str) else sample.input_text()


def mka1_sample_dict(sample: Sample) -> dict[str, Any]:
    f = sample.fields
    output = sample.completion or ""
    return {
        "output_text": output,
        "extracted_output": f.get("extracted_output", output),
        "model": f.get("model"),
        "prompt": _prompt(sample),
        "task_id": f.get("task_id"),
        "run_id": f.get("run_id"),
        "sample_id": sample.id,
    }


def mka1_item(sample: Sample) -> dict[str, Any]:
    item = dict(sample.fields)
    item.setdefault("prompt", _prompt(sample))
    item.setdefault("target", sample.expected)
    item.setdefault("reference_answer", sample.expected)
    item.setdefault("choices", [])
    item.setdefault("task_id", sample.fields.get("task_id"))
    return item


def mka1_sample(sample: Sample) -> dict[str, Any]:
    return {"sample": mka1_sample_dict(sample), "item": mka1_item(sample)}


def mka1_batch_entry(sample: Sample) -> dict[str, Any]:
    f = sample.fields
    output = sample.completion or ""
    return {
        "sample_id": sample.id,
        "task_id": f.get("task_id"),
        "model": f.get("model"),
        "prompt": _prompt(sample),
        "target": sample.expected,
        "output_text": output,
        "extracted_output": f.get("extracted_output", output),
        "dataset_row": dict(f),
        "response_id": f.get("response_id"),
        "scores": {},
        "judge": None,
    }


def _submission(sample: Sample, extractor: Extractor | None) -> str:
    """Letta's extractor picks the submission (default: the last assistant turn)."""
    if extractor is None:
        return sample.completion or ""
    from studio.core.graders.extractors import ExtractionError, extract

    try:
        return extract(sample, extractor)
    except ExtractionError:
        return ""


def letta(sample: Sample, extractor: Extractor | None = None) -> dict[str, Any]:
    f = sample.fields
    return {
        "sample": {
            "id": sample.id,
            "input": f.get("input", sample.input_text()),
            "ground_truth": sample.expected,
            "metadata": sample.metadata,
            "rubric_vars": f.get("rubric_vars") or {},
            "agent_args": f.get("agent_args") or {},
            "extra_vars": f.get("extra_vars") or {},
        },
        "submission": _submission(sample, extractor),
    }


def promptfoo(sample: Sample) -> dict[str, Any]:
    variables = dict(sample.fields.get("vars") or sample.fields)
    if sample.expected is not None:
        variables.setdefault("expected", sample.expected)
    return {
        "output": sample.completion or "",
        "context": {
            "prompt": _prompt(sample),
            "vars": variables,
            "test": {"vars": variables, "metadata": sample.metadata},
            "config": {},
        },
    }


BUILDERS: dict[str, Callable[[Sample], dict[str, Any]]] = {
    "adaptive": adaptive,
    "mka1_sample": mka1_sample,
    "mka1_batch": mka1_batch_entry,
    "letta": letta,
    "promptfoo": promptfoo,
}


def build(contract: str, samples: Sequence[Sample], extractor: Extractor | None = None) -> list[dict[str, Any]]:
    if contract == "letta" and extractor is not None:
        return [letta(s, extractor) for s in samples]
    make = BUILDERS[contract]
    return [make(s) for s in samples]
