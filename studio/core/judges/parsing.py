"""Reading a judge's free-text answer: JSON objects and arrays, verdict words, scores."""

from __future__ import annotations

import re
from typing import TypeVar

from studio.core.json_types import JsonArray, JsonObject
from studio.core.outside import parse_outside

_J = TypeVar("_J")

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _candidates(text: str) -> list[str]:
    fenced: list[str] = _FENCE.findall(text)  # one group: strings
    return [*fenced, text]


def _balanced(text: str, opener: str, closer: str) -> list[str]:
    """Substrings of ``text`` that start at an opener and end at its matching closer."""
    found: list[str] = []
    for start in [i for i, ch in enumerate(text) if ch == opener][:20]:
        depth, in_str, escape = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == opener:
                depth += 1
            elif ch == closer:
                depth -= 1
                if depth == 0:
                    found.append(text[start : i + 1])
                    break
        if found:
            break
    return found


def _first_json(text: str, opener: str, closer: str, kind: type[_J]) -> _J | None:
    """The first JSON value of type ``kind``: a fenced block or the whole text, else a bracketed part."""
    for candidate in _candidates(text):
        for blob in [candidate.strip(), *_balanced(candidate, opener, closer)]:
            try:
                value = parse_outside(blob)  # bounded: a judge's answer may nest ten thousand deep
            except ValueError:
                continue
            if isinstance(value, kind):
                return value
    return None


def parse_json_object(text: str) -> JsonObject | None:
    return _first_json(text, "{", "}", dict)


def parse_json_list(text: str) -> JsonArray | None:
    found = _first_json(text, "[", "]", list)
    if found is not None:
        return found
    obj = parse_json_object(text)
    if obj:
        for value in obj.values():
            if isinstance(value, list):
                return value
    return None


def parse_verdict(text: str, allowed: tuple[str, ...]) -> tuple[str | None, str]:
    """(verdict, reasoning): a JSON ``verdict`` field first, else the last allowed word in the text."""
    obj = parse_json_object(text)
    if obj is not None:
        raw = obj.get("verdict", obj.get("score", obj.get("result")))
        reasoning = str(
            obj.get("reasoning") or obj.get("rationale") or obj.get("explanation") or ""
        )
        if isinstance(raw, str) and raw.strip().upper() in allowed:
            return raw.strip().upper(), reasoning
    pattern = re.compile(r"\b(" + "|".join(sorted(allowed, key=len, reverse=True)) + r")\b")
    hits = pattern.findall(text)
    if hits:
        return hits[-1], text.strip()
    return None, text.strip()


def parse_numbered_list(text: str) -> list[str]:
    """Lines of a numbered or bulleted list, markers removed; a JSON array is accepted too."""
    as_json = parse_json_list(text)
    if as_json and all(isinstance(x, str) for x in as_json):
        return [x.strip() for x in as_json if x.strip()]
    items = []
    for line in text.splitlines():
        match = re.match(r"^\s*(?:\d+[.)]|[-*•])\s+(.*\S)", line)
        if match:
            items.append(match.group(1))
    return items


def parse_int_score(text: str, low: int, high: int) -> int | None:
    """The integer after ``SCORE:`` (else the last integer in the text) when it is in range."""
    match = re.search(r"SCORE\s*[:=]\s*(-?\d+)", text, re.IGNORECASE)
    numbers = [match.group(1)] if match else re.findall(r"-?\d+", text)
    for raw in reversed(numbers):
        value = int(raw)
        if low <= value <= high:
            return value
    return None


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def split_sentences(text: str) -> list[str]:
    """Sentence split used when the judge gives no claims (and by the scripted judge)."""
    parts: list[str] = []
    for block in text.split("\n"):
        parts.extend(p.strip() for p in _SENTENCE.split(block.strip()))
    return [p for p in parts if p and any(ch.isalnum() for ch in p)]
