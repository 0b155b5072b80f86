"""Keeping configured API keys out of what a judge's answer puts in the library.

A server can echo the key it was sent (a debugging proxy, a hostile endpoint, a model told the
key), and not always as itself: reversed, spaced out, split in two, with a zero-width space or
full-width letters inside. Every answer is cleaned before it is parsed, cached in ``judge_cache``,
stored in results (``raw``, ``rationale``, ``details``) or exported: those are all made from the
cleaned answer.

- **Only what the studio reads is kept** of a chat answer (``keep_needed``): an OpenAI-style body's
  id, model, usage and each choice's message, logprobs and finish reason; an Anthropic body's
  content blocks, usage and stop reason. A field a server adds (``debug``, ``echo``, headers) is
  dropped before anything is stored.
- **The keys this process knows** (``credentials.remember_secret``) are masked in every string and
  object key after JSON decoding (so an escaped key is caught too), as themselves and in the variants
  that are cheap to find: the text is read as its letters and digits only (blanks, punctuation and
  invisible characters such as U+200B dropped, compatibility forms like full-width letters folded,
  case ignored), and any run of ``fragment_length`` consecutive characters of the key, forwards or
  reversed, is masked from its first to its last character.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from typing import Any

from .credentials import known_secrets

MASK = "***"

_ALNUM = re.compile(r"[0-9A-Za-z]")


def _skeleton(text: str) -> tuple[str, list[int]]:
    """``text``'s letters and digits, lower-cased, and where each stands in ``text``. A character
    that folds to none (a letter of another script) stands as NUL, which no key holds, so it breaks
    a run instead of joining its neighbours."""
    if text.isascii():
        places = [m.start() for m in _ALNUM.finditer(text)]
        return "".join(text[i] for i in places).lower(), places
    chars: list[str] = []
    places = []
    for i, ch in enumerate(text):
        if ch.isascii():
            if ch.isalnum():
                chars.append(ch.lower())
                places.append(i)
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if len(folded) == 1 and folded.isascii() and folded.isalnum():
            chars.append(folded.lower())
            places.append(i)
        elif ch.isalnum():
            chars.append("\0")
            places.append(i)
        # anything else (blanks, marks, zero-width and format characters) is skipped
    return "".join(chars), places


def fragment_length(key: str) -> int:
    """How long a piece of the key must be to be masked: a third of the key, between 8 and 16
    characters (a key split in two or three is caught; a few letters it shares with a word are not)."""
    return min(16, max(8, len(key) // 3))


def _key_spans(skeleton: str, key: str) -> list[tuple[int, int]]:
    """Spans of ``skeleton`` holding a piece of ``key`` (already a skeleton), forwards or reversed."""
    size = min(len(key), fragment_length(key))
    spans: list[tuple[int, int]] = []
    for variant in {key, key[::-1]}:
        for start in range(len(variant) - size + 1):
            piece = variant[start:start + size]
            at = skeleton.find(piece)
            while at >= 0:
                spans.append((at, at + size))
                at = skeleton.find(piece, at + 1)
    return spans


@functools.lru_cache(maxsize=8)
def _key_skeletons(secrets: frozenset[str]) -> tuple[str, ...]:
    return tuple(k for k in (_skeleton(s)[0] for s in secrets) if len(k) >= 4)


def _variant_spans(text: str, secrets: frozenset[str]) -> list[tuple[int, int]]:
    """Merged spans of ``text`` (start, end) to mask for any of ``secrets`` in any cheap variant."""
    keys = _key_skeletons(secrets)
    if not keys or len(text) < min(min(len(k), fragment_length(k)) for k in keys):
        return []  # too short to hold a piece worth masking (a logprob's token)
    skeleton, places = _skeleton(text)
    found = sorted(span for key in keys for span in _key_spans(skeleton, key))
    merged: list[list[int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(places[s], places[e - 1] + 1) for s, e in merged]


def redact_text(text: str, secrets: frozenset[str] | None = None) -> str:
    secrets = known_secrets() if secrets is None else secrets
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    spans = _variant_spans(text, secrets)
    for start, end in reversed(spans):
        text = text[:start] + MASK + text[end:]
    return text


def redact_value(value: Any, secrets: frozenset[str] | None = None) -> Any:
    """``value`` (decoded JSON) with every known key in any string or object key replaced."""
    secrets = known_secrets() if secrets is None else secrets
    if not secrets:
        return value
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {redact_text(str(k), secrets): redact_value(v, secrets) for k, v in value.items()}
    return value


#: of an OpenAI-style chat answer: what the adapters, the trace and the window read
_OPENAI_TOP = ("id", "object", "model", "created", "choices", "usage", "system_fingerprint")
_OPENAI_CHOICE = ("index", "message", "logprobs", "finish_reason")
_OPENAI_MESSAGE = ("role", "content", "refusal", "reasoning_content")
#: of an Anthropic messages answer
_ANTHROPIC_TOP = ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage")
_ANTHROPIC_BLOCK = ("type", "text")


def _only(value: Any, keys: tuple[str, ...]) -> Any:
    return {k: value[k] for k in keys if k in value} if isinstance(value, dict) else value


def keep_needed(answer: Any) -> Any:
    """A chat answer cut to the fields the studio reads (see the module docstring); any other body
    (a reward server's, an embeddings or a probe answer) as it is."""
    if not isinstance(answer, dict):
        return answer
    if isinstance(answer.get("choices"), list):
        kept = _only(answer, _OPENAI_TOP)
        kept["choices"] = [
            {**_only(c, _OPENAI_CHOICE), **({"message": _only(c["message"], _OPENAI_MESSAGE)}
                                           if isinstance(c, dict) and isinstance(c.get("message"), dict) else {})}
            if isinstance(c, dict) else c
            for c in answer["choices"]]
        return kept
    if answer.get("type") == "message" and isinstance(answer.get("content"), list):
        kept = _only(answer, _ANTHROPIC_TOP)
        kept["content"] = [_only(b, _ANTHROPIC_BLOCK) for b in answer["content"]]
        return kept
    return answer


def redact_answer(answer: Any, text: str) -> tuple[Any, str]:
    """(answer, text) of one JSON body cut to what the studio needs, with known keys removed;
    unchanged (and not re-encoded) when there was nothing to cut or mask."""
    cleaned = keep_needed(answer)
    secrets = known_secrets()
    if secrets:
        cleaned = redact_value(cleaned, secrets)
    if cleaned == answer:
        return answer, text
    return cleaned, json.dumps(cleaned, ensure_ascii=False)
