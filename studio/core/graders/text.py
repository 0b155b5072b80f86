"""Text comparison helpers with the platforms' semantics (HUD's normalise, token F1, first number).

These follow ``hud.graders.text`` rule for rule (checked sample by sample in tests/conformance):
every character that is neither a word character nor whitespace (Unicode-aware, as Python's ``re``
reads it: zero-width space, emoji, ``−``, ``°`` ...) becomes a space, articles go, whitespace runs
collapse; token F1 is 0.0 when either side has no token (both empty included).
"""

from __future__ import annotations

import re
from collections import Counter

_ARTICLES = re.compile(r"\b(?:a|an|the)\b", re.IGNORECASE)
_NOT_WORD = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")
# HUD's first number: optional sign, digits with an optional fraction (or a bare fraction), optional
# exponent. ``1,000`` reads as 1 (a comma ends the number), ``.314e1`` as 3.14; ``\d`` is Unicode.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# The opt-in reading with thousands separators (BuiltinOptions.thousands_separators).
_GROUPED = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def normalize(text: str) -> str:
    """Lowercase, non-word characters to spaces, drop a/an/the, collapse whitespace (HUD's rule)."""
    text = _NOT_WORD.sub(" ", text.lower())
    text = _ARTICLES.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def token_f1(prediction: str, reference: str) -> float:
    """HUD's ``f1_score``: 0.0 when either side normalises to no token (both empty too)."""
    pred, gold = normalize(prediction).split(), normalize(reference).split()
    if not pred or not gold:
        return 0.0
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def first_number(text: str, thousands_separators: bool = False) -> float | None:
    """The first number in ``text`` as HUD's ``numeric_match`` reads it (None when there is none)."""
    match = (_GROUPED if thousands_separators else _NUMBER).search(text)
    if match is None:
        return None
    try:
        return float(match.group().replace(",", ""))
    except ValueError:  # pragma: no cover - the pattern only matches what float() reads
        return None


def ascii_printable(text: str) -> bool:
    """Every character in 32..126, newlines allowed (Letta's rule)."""
    # for ASCII text, str.isprintable is exactly "32 <= ord(c) <= 126": the check in C, not a
    # Python step a character (a suite's costliest check, bench/profiles/issue38_suite.txt)
    return text.isascii() and (text.isprintable() or text.replace("\n", "").replace("\r", "").isprintable())
