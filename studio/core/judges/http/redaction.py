"""Keeping configured API keys out of what a judge's answer puts in the library.

A server can echo the key it was sent (a debugging proxy, a hostile endpoint, a model told the
key). Every answer is cleaned of the keys this process knows (``credentials.remember_secret``)
before it is parsed, cached in ``judge_cache``, stored in results or exported: those are all made
from the cleaned answer. Strings are cleaned after JSON decoding, so an escaped key is caught too.
"""

from __future__ import annotations

import json
from typing import Any

from .credentials import known_secrets

MASK = "***"


def redact_text(text: str, secrets: frozenset[str] | None = None) -> str:
    for secret in known_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, MASK)
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


def redact_answer(answer: Any, text: str) -> tuple[Any, str]:
    """(answer, text) of one JSON body with known keys removed; unchanged (and not re-encoded)
    when no key is in it. A key can hide in the text only as itself or JSON-escaped."""
    secrets = known_secrets()
    if not secrets or not (any(s in text for s in secrets) or "\\u" in text or "\\/" in text):
        return answer, text
    cleaned = redact_value(answer, secrets)
    if cleaned == answer:
        return answer, text
    return cleaned, json.dumps(cleaned, ensure_ascii=False)
