"""The variables a judge template can read, built from one sample.

Adaptive's Handlebars names (completion, turns, context_str ...), OpenAI's ``sample``/``item``, and
the judge's own fields (criteria, score range ...) live in one flat dict so every dialect sees the
same facts. Context turns exclude the completion; "document" turns carry retrieved chunks.
"""

from __future__ import annotations

from studio.core.json_types import JsonObject
from studio.core.models import GraderBase, Sample, Turn

#: every sample variable a template author can pick from the palette, with what it holds; a test
#: checks it against ``sample_variables`` so the two cannot drift. Kinds document their own keys
#: (``criteria``, ``output_schema`` ...) in their ``KIND.variables``.
VARIABLE_DOCS: dict[str, str] = {
    "completion": "the text under judgement (the extractor's output)",
    "last_user_turn_content": "the last user message",
    "context_str": "the conversation before the completion, one 'role: text' per line",
    "context_str_without_last_user": "the same without the last user message",
    "expected": "the sample's expected answer",
    "metadata.expected": "expected answer, from the metadata",
    "documents": "retrieved chunks (document turns)",
    "turns": "every turn, the completion included",
    "context_turns": "turns before the completion",
    "context_turns_without_last_user": "turns before the completion, without the last user message",
    "item": "the original dataset row (OpenAI item)",
    "sample.output_text": "OpenAI: the completion",
}


def extracted_completion(grader: GraderBase, sample: Sample) -> str:
    """The text under judgement: the grader's extractor's output, else the sample's completion."""
    if grader.extractor is not None:
        from studio.core.models.extractors import extract

        return extract(sample, grader.extractor)
    return sample.completion or ""


def turn_dicts(turns: list[Turn]) -> list[JsonObject]:
    return [{"role": t.role, "content": t.content} for t in turns]


def format_turns(turns: list[Turn]) -> str:
    return "\n".join(f"{t.role}: {t.content}" for t in turns)


def without_last_user(turns: list[Turn]) -> list[Turn]:
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "user":
            return turns[:i] + turns[i + 1 :]
    return list(turns)


def before_last_user(turns: list[Turn]) -> list[Turn]:
    """Turns that precede the last user turn: the conversation's context for a RAG judge."""
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "user":
            return turns[:i]
    return list(turns)


def sample_variables(
    grader: GraderBase, sample: Sample, completion: str | None = None
) -> JsonObject:
    """Every standard variable for ``sample``; judge kinds add their own keys on top."""
    text = extracted_completion(grader, sample) if completion is None else completion
    context = list(sample.messages)
    turns = [*context, Turn(role="assistant", content=text)]
    metadata = dict(sample.metadata)
    if sample.expected is not None:
        metadata.setdefault("expected", sample.expected)
    last_user = next((t.content for t in reversed(context) if t.role == "user"), "")
    trimmed = without_last_user(context)
    item = dict(sample.fields)
    item.setdefault("id", sample.id)
    if sample.expected is not None:
        item.setdefault("expected", sample.expected)
    template_variables = dict(getattr(grader, "template_variables", {}) or {})
    return {
        **{k: v for k, v in template_variables.items() if k.isidentifier()},
        "completion": text,
        "last_user_turn_content": last_user,
        "context_str": format_turns(context),
        "context_str_without_last_user": format_turns(trimmed),
        "turns": turn_dicts(turns),
        "context_turns": turn_dicts(context),
        "context_turns_without_last_user": turn_dicts(trimmed),
        "metadata": metadata,
        "expected": sample.expected or "",
        "documents": [t.content for t in context if t.role == "document"],
        "template_variables": template_variables,
        "output_schema": "",
        "criteria": "",
        "sample": {"output_text": text, "id": sample.id},
        "item": item,
    }
