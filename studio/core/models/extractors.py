"""Letta's extractors: which part of a sample's trajectory a grader scores."""

from __future__ import annotations

import re

from studio.core.models import Extractor, Sample, Turn


class ExtractionError(ValueError):
    pass


def _assistant(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if t.role == "assistant"]


def extract(sample: Sample, extractor: Extractor | None) -> str:
    """The submission text; without an extractor, the completion (last assistant turn)."""
    if extractor is None and sample.completion is not None:
        return sample.completion
    turns = sample.thread().turns
    if extractor is None or extractor.kind == "last_assistant":
        assistant = _assistant(turns)
        return assistant[-1].content if assistant else ""
    config = extractor.config
    kind = extractor.kind
    if kind == "first_assistant":
        assistant = _assistant(turns)
        return assistant[0].content if assistant else ""
    if kind == "all_assistant":
        return str(config.get("separator", "\n")).join(t.content for t in _assistant(turns))
    if kind == "last_turn":
        return turns[-1].content if turns else ""
    if kind == "pattern":
        pattern = config.get("pattern")
        if not pattern:
            raise ExtractionError("the pattern extractor needs config.pattern")
        group = config.get("group", 0)
        text = "\n".join(t.content for t in _assistant(turns))
        try:
            if config.get("search_all"):
                return "\n".join(m.group(group) or "" for m in re.finditer(pattern, text))
            match = re.search(pattern, text)
        except (re.error, IndexError) as exc:
            raise ExtractionError(f"pattern extractor: {exc}") from None
        return (match.group(group) or "") if match else ""
    if kind == "tool_arguments":
        name = config.get("tool_name")
        for turn in reversed(turns):
            for call in reversed(turn.tool_calls):
                if name is None or call.name == name:
                    return call.arguments
        return "{}"
    if kind == "tool_output":
        name = config.get("tool_name")
        for turn in reversed(turns):
            if turn.role == "tool" and (name is None or turn.name == name):
                return turn.content
        return ""
    if kind == "after_marker":
        marker = config.get("marker")
        if not marker:
            raise ExtractionError("the after_marker extractor needs config.marker")
        for turn in reversed(_assistant(turns)):
            if marker in turn.content:
                head, _, tail = turn.content.rpartition(marker)
                return (marker + tail if config.get("include_marker") else tail).strip()
        return ""
    if kind == "memory_block":
        raise ExtractionError("the memory_block extractor needs a Letta agent's state, which offline samples do not have")
    raise ExtractionError(f"unknown extractor {kind!r}")
