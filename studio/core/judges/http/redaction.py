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
- **Encoded keys too**: the key's hexadecimal and base64 forms (standard or URL-safe, at each of
  base64's three alignments, so ``base64("user:" + key)`` or an echoed Basic header is caught where
  the key sits inside it) are read the same way, as further pieces to find. A server that decodes
  nothing can still hand back what it was sent in an encoding a client library applied for it.
"""

from __future__ import annotations

import base64
import bisect
import functools
import json
import re
import unicodedata

from studio.core.json_types import JsonValue

from .credentials import known_secrets

MASK = "***"

#: a run of ASCII letters and digits, or one other character (folded, or skipped, by ``_pieces``)
_TOKEN = re.compile(r"[0-9A-Za-z]+|[^\x00-\x7f]")
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]+")


def _pieces(text: str) -> tuple[str, list[int], list[int]]:
    """``text``'s letters and digits, lower-cased (the skeleton), with where each run of them
    starts in the skeleton and in ``text``. A character that folds to none (a letter of another
    script) stands as NUL, which no key holds, so it breaks a run instead of joining its neighbours.
    Runs, not a position a letter: an ASCII word is one regex match and one slice."""
    chars: list[str] = []
    starts: list[int] = []
    places: list[int] = []
    size = 0
    for match in _TOKEN.finditer(text):
        piece = match.group()
        if piece.isascii():
            piece = piece.lower()
        else:
            folded = unicodedata.normalize("NFKC", piece)
            if len(folded) == 1 and folded.isascii() and folded.isalnum():
                piece = folded.lower()
            elif piece.isalnum():
                piece = "\0"
            else:  # blanks, marks, zero-width and format characters are skipped
                continue
        chars.append(piece)
        starts.append(size)
        places.append(match.start())
        size += len(piece)
    return "".join(chars), starts, places


def _skeleton(text: str) -> tuple[str, list[int]]:
    """``text``'s skeleton (``_pieces``) and where each of its characters stands in ``text``."""
    skeleton, starts, places = _pieces(text)
    ends = [*starts[1:], len(skeleton)]
    return skeleton, [p + k for s, e, p in zip(starts, ends, places, strict=True) for k in range(e - s)]


def fragment_length(key: str) -> int:
    """How long a piece of the key must be to be masked: a third of the key, between 8 and 16
    characters (a key split in two or three is caught; a few letters it shares with a word are not)."""
    return min(16, max(8, len(key) // 3))


def _key_spans(skeleton: str, key: str) -> list[tuple[int, int]]:
    """Spans of ``skeleton`` holding a piece of ``key`` (already a skeleton) at least
    ``fragment_length`` long, forwards or reversed, each as long as the piece runs.

    Why anchors and not every piece: a piece of ``size`` characters always contains one of the
    key's blocks of ``(size + 1) // 2`` characters cut at multiples of that length, so finding the
    few blocks (then growing each hit both ways while text and key agree) finds every piece with a
    handful of ``str.find`` calls instead of one a piece (bench/redaction.py)."""
    size = min(len(key), fragment_length(key))
    block = (size + 1) // 2
    spans: list[tuple[int, int]] = []
    for variant in {key, key[::-1]}:
        for offset in range(0, len(variant) - block + 1, block):
            anchor = variant[offset:offset + block]
            at = skeleton.find(anchor)
            while at >= 0:
                left = 0
                while left < min(at, offset) and skeleton[at - left - 1] == variant[offset - left - 1]:
                    left += 1
                end, key_end = at + block, offset + block
                right = 0
                while (end + right < len(skeleton) and key_end + right < len(variant)
                       and skeleton[end + right] == variant[key_end + right]):
                    right += 1
                if left + block + right >= size:
                    spans.append((at - left, end + right))
                at = skeleton.find(anchor, at + 1)
    return spans


def _encodings(secret: str) -> list[str]:
    """The forms an encoder gives ``secret`` in: hex, and the base64 characters that depend on the
    key's bytes alone at each alignment (``align`` bytes before it in the encoded text): those that
    also carry bits of a neighbour differ with the neighbour, so they are cut off both ends."""
    data = secret.encode("utf-8")
    forms = [data.hex()]
    for align in range(3):
        text = base64.b64encode(b"\0" * align + data).decode("ascii").rstrip("=")
        first = -(-align * 8 // 6)  # the characters holding any bit of the padding before the key
        last = (align + len(data)) * 8 // 6  # the characters whose bits are all the key's (or pad's)
        forms.append(text[first:last])
    return forms


@functools.lru_cache(maxsize=8)
def _key_skeletons(secrets: frozenset[str]) -> tuple[str, ...]:
    forms = [form for s in secrets for form in (s, *_encodings(s))]
    return tuple(dict.fromkeys(k for k in (_skeleton(f)[0] for f in forms) if len(k) >= 4))


def _variant_spans(text: str, secrets: frozenset[str]) -> list[tuple[int, int]]:
    """Merged spans of ``text`` (start, end) to mask for any of ``secrets`` in any cheap variant."""
    keys = _key_skeletons(secrets)
    if not keys or len(text) < min(min(len(k), fragment_length(k)) for k in keys):
        return []  # too short to hold a piece worth masking (a logprob's token)
    if text.isascii():  # where the letters stand is needed only once something is found
        skeleton = _NOT_ALNUM.sub("", text).lower()
        found = sorted(span for key in keys for span in _key_spans(skeleton, key))
        if not found:
            return []
        _, starts, places = _pieces(text)
    else:
        skeleton, starts, places = _pieces(text)
        found = sorted(span for key in keys for span in _key_spans(skeleton, key))
    merged: list[list[int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])

    def place(k: int) -> int:  # where the skeleton's k-th character stands in ``text``
        run = bisect.bisect_right(starts, k) - 1
        return places[run] + k - starts[run]

    return [(place(s), place(e - 1) + 1) for s, e in merged]


def redact_text(text: str, secrets: frozenset[str] | None = None) -> str:
    secrets = known_secrets() if secrets is None else secrets
    spans = _variant_spans(text, secrets)  # first: a key masked whole would hide a run it overlaps
    for start, end in reversed(spans):
        text = text[:start] + MASK + text[end:]
    for secret in secrets:  # what the letters miss (a key of punctuation and few letters)
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_value(value: JsonValue, secrets: frozenset[str] | None = None) -> JsonValue:
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


def _only(value: JsonValue, keys: tuple[str, ...]) -> JsonValue:
    return {k: value[k] for k in keys if k in value} if isinstance(value, dict) else value


def keep_needed(answer: JsonValue) -> JsonValue:
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


def redact_answer(answer: JsonValue, text: str) -> tuple[JsonValue, str]:
    """(answer, text) of one JSON body cut to what the studio needs, with known keys removed;
    unchanged (and not re-encoded) when there was nothing to cut or mask."""
    cleaned = keep_needed(answer)
    secrets = known_secrets()
    if secrets:
        cleaned = redact_value(cleaned, secrets)
    if cleaned == answer:
        return answer, text
    return cleaned, json.dumps(cleaned, ensure_ascii=False)
