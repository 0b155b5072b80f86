"""Letta's extractors: which part of a sample's trajectory a grader scores.

A sample's flat thread is read as Letta's trajectory: each user turn opens a new turn of the
agent; an assistant turn with text is an assistant message, its tool calls a tool-call message (an
assistant turn that only calls tools has no assistant message); a tool turn is a tool return. Each
extractor then follows letta-evals' rule exactly (checked in tests/conformance): ``pattern`` and
``after_marker`` search the latest assistant message that matches, ``tool_arguments`` and
``tool_output`` take the first matching call, ``last_turn`` joins every assistant message of the
last turn.
"""

from __future__ import annotations

import re

from studio.core import saferegex
from studio.core.json_types import JsonObject
from studio.core.models import Extractor, Sample, ToolCall, Turn


class ExtractionError(ValueError):
    pass


def trajectory(turns: list[Turn]) -> list[list[Turn]]:
    """The agent's turns (user turns split them; system and document turns are not messages)."""
    groups: list[list[Turn]] = []
    current: list[Turn] | None = None
    for turn in turns:
        if turn.role == "user":
            current = []
            groups.append(current)
        elif turn.role in ("assistant", "tool"):
            if current is None:
                current = []
                groups.append(current)
            current.append(turn)
    return groups


def _is_message(turn: Turn) -> bool:
    """An assistant turn is an assistant message unless it only calls tools."""
    return turn.role == "assistant" and (bool(turn.content) or not turn.tool_calls)


def _messages(groups: list[list[Turn]]) -> list[str]:
    return [t.content for group in groups for t in group if _is_message(t)]


def _calls(groups: list[list[Turn]]) -> list[ToolCall]:
    return [c for group in groups for t in group if t.role == "assistant" for c in t.tool_calls]


def _required(config: JsonObject, name: str, kind: str) -> str:
    value = config.get(name)
    if not value:
        raise ExtractionError(f"the {kind} extractor needs config.{name}")
    return str(value)


def _pattern(messages: list[str], config: JsonObject) -> str:
    pattern = _required(config, "pattern", "pattern")
    group = config.get("group", 0)
    try:  # compiled on first use: with no assistant message a bad pattern is never read (Letta)
        for content in reversed(messages):  # never unbounded on the host: studio.core.saferegex
            if config.get("search_all"):
                found = saferegex.findall(pattern, content)
                if found:
                    if isinstance(found[0], tuple):
                        return " ".join(m[group] for m in found)
                    return " ".join(found)
            else:
                match = saferegex.search(pattern, content)
                if match:
                    return match.group(group) or ""
    except (re.error, IndexError, TypeError, saferegex.RegexFailure) as exc:
        raise ExtractionError(f"pattern extractor: {exc}") from None
    return ""


def extract(sample: Sample, extractor: Extractor | None) -> str:
    """The submission text; without an extractor, the completion (last assistant message)."""
    if extractor is None and sample.completion is not None:
        return sample.completion
    groups = trajectory(sample.thread().turns)
    if not any(groups):
        return ""  # Letta's empty trajectory: no extractor runs
    kind = extractor.kind if extractor is not None else "last_assistant"
    config = extractor.config if extractor is not None else {}
    separator = str(config.get("separator", "\n"))
    if kind == "last_assistant":
        messages = _messages(groups)
        return messages[-1] if messages else ""
    if kind == "first_assistant":
        messages = _messages(groups)
        return messages[0] if messages else ""
    if kind == "all_assistant":
        return separator.join(_messages(groups))
    if kind == "last_turn":
        return separator.join(_messages(groups[-1:]))
    if kind == "pattern":
        return _pattern(_messages(groups), config)
    if kind == "tool_arguments":
        name = _required(config, "tool_name", "tool_arguments")
        return next((c.arguments for c in _calls(groups) if c.name == name), "{}")
    if kind == "tool_output":
        name = _required(config, "tool_name", "tool_output")
        call_id = next((c.id for c in _calls(groups) if c.name == name), None)
        if call_id:
            for group in groups:
                for turn in group:
                    if turn.role == "tool" and turn.tool_call_id == call_id:
                        return turn.content
        return ""
    if kind == "after_marker":
        marker = _required(config, "marker", "after_marker")
        for content in reversed(_messages(groups)):
            at = content.find(marker)
            if at >= 0:
                return (content[at:] if config.get("include_marker") else content[at + len(marker):]).strip()
        return ""
    if kind == "memory_block":
        raise ExtractionError("the memory_block extractor needs a Letta agent's state, which offline samples do not have")
    raise ExtractionError(f"unknown extractor {kind!r}")
