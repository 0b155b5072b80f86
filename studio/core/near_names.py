"""Near names for a name the library does not have: "no grader with key 'exactt'; did you mean 'exact'?".

One helper for every lookup a person types a key into (graders, suites, datasets, endpoints, a run's
graders, a suite's members, kinds), so each "no such X" says the same thing the same way. Closeness is
difflib's ratio (a typo, a letter swapped, a missing suffix) with case ignored; nothing is suggested
when nothing is close, rather than a random name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: names compared at most (a library of more keys is searched among its first ones, in order)
MAX_CANDIDATES = 10_000
#: how alike two names must be (difflib's ratio) to be offered
CUTOFF = 0.6


def near_names(name: str, known: Iterable[str], n: int = 2) -> list[str]:
    """Up to ``n`` of ``known`` closest to ``name`` (a same-name-but-case match first), best first."""
    candidates: list[str] = []
    for i, candidate in enumerate(known):
        if i >= MAX_CANDIDATES:
            break
        if candidate != name:
            candidates.append(candidate)
    folded = {c.casefold(): c for c in candidates}
    found = [folded[name.casefold()]] if name.casefold() in folded else []
    by_fold = difflib.get_close_matches(name.casefold(), list(folded), n=n + 1, cutoff=CUTOFF)
    for match in by_fold:
        original = folded[match]
        if original not in found:
            found.append(original)
    return found[:n]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``) to append to a "no such name" sentence, or ``""``."""
    found = near_names(name, known)
    if not found:
        return ""
    return "; did you mean " + " or ".join(repr(f) for f in found) + "?"


def first_free(base: str, taken: Iterable[str], joiner: str = "-") -> str:
    """``base`` if no name in ``taken`` has it, else the first of base-2, base-3, … free: the one rule
    for a name the studio proposes (a generated dataset, a duplicated grader's key), so a proposal is
    never a name that exists."""
    used = set(taken)
    if base not in used:
        return base
    return next(name for n in range(2, len(used) + 3) if (name := f"{base}{joiner}{n}") not in used)
