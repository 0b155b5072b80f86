"""The tricky texts every conformance check feeds to both sides: what breaks text graders.

Deterministic (a fixed seed), so a disagreement reproduces; kept to a few hundred pairs so each
platform runs in one subprocess call.
"""

from __future__ import annotations

import random

TEXTS: list[str] = [
    "Paris", "  Paris  ", "paris", "PARIS", "Par\u00a0is", "Paris\u200b", "Pa\u200bris", "Paris\u3000",
    "Cafe\u0301", "Caf\u00e9", "\uff11\uff12\uff13", "123", "\U0001F600 Paris", "Paris \U0001F1EB\U0001F1F7",
    "stra\u00dfe", "STRASSE", "\ufb01ne", "fine", "\u0130stanbul", "istanbul", "\u22125", "-5", "\u2248 3",
    "20\u00b0C", "", "   ", "\n", "1,000", "1000", "about 1,000 people", ".314e1", "3.14", "pi is 3.14159",
    "NaN", "Infinity", "-Infinity", "the answer is 42", "42!", "An apple a day", "a", "the", "[unclosed",
    r"\d+", "ab*c", "(?i)paris", '{"a": NaN}', '{"a": Infinity}', '{"a": 1}', "[1, 2]", "null", "true",
    "The Quick, brown fox!", "tab\tsep\nline", "x_y z-w", "\u03a9mega", "\u01c5ungla", "1e3 apples",
    "+7", "7.", "\u0663\u0664", "Answer: Paris. Final answer: Paris!", "ANSWER: 42\nmore", "\u00a0\u00a0",
    # numbers with separators (issue 26): HUD reads the first number as its regex does
    "1000000", "1,000,000", "1.000.000", "about 1.000.000 people", "1 000 000",
]


def pairs(count: int = 300, seed: int = 12) -> list[tuple[str, str]]:
    """(answer, expected) pairs: every text against itself, then a seeded random mix."""
    rng = random.Random(seed)
    found = [(t, t) for t in TEXTS]
    while len(found) < count:
        found.append((rng.choice(TEXTS), rng.choice(TEXTS)))
    return found


# comparisons made and agreed, per platform (printed at the end of the run by conftest.py)
TALLY: dict[str, list[int]] = {}


def compare(platform: str, ours: list, theirs: list, labels: list[str]) -> list[str]:
    """Count one comparison per item; return a line per disagreement (empty when all agree)."""
    assert len(ours) == len(theirs) == len(labels)
    bad = [f"{label}: studio {a!r} vs {platform} {b!r}" for a, b, label in zip(ours, theirs, labels, strict=True)
           if not same(a, b)]
    made = TALLY.setdefault(platform, [0, 0])
    made[0] += len(ours)
    made[1] += len(ours) - len(bad)
    return bad


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b
