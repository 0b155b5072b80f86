"""Host regexes: what bounding them (studio.core.saferegex) costs per sample, against plain ``re``.

Built-in ``regex_match`` over N samples of ASCII completions with a typical pattern (the RE2 path),
the same over Unicode completions (the helper process: one round trip a sample), and the attack
``^(a+)+$`` on ``"a" * 34 + "!"`` (RE2: answered at once; plain ``re`` would run for minutes and is not
timed here). Run: ``python bench/host_regex.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import re
import time

from studio.core import saferegex
from studio.core.graders.builtin import score_sample
from studio.core.models import BuiltinGrader, BuiltinOptions, Sample

PATTERN = r"\b(?:total|answer)\s*[:=]\s*(\d+(?:\.\d+)?)\b"


def timed(label: str, fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds * 1e6 / n:8.1f} us/sample  ({seconds:.2f} s for {n:,})")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=20_000)
    n = parser.parse_args().samples
    grader = BuiltinGrader(key="r", function="regex_match", options=BuiltinOptions(reference=PATTERN))
    ascii_samples = [Sample(id=str(i), completion=f"step {i}: the answer = {i % 97}.{i % 7} as shown") for i in range(n)]
    unicode_samples = [Sample(id=str(i), completion=f"étape {i} : answer = {i % 97} ✓") for i in range(n // 10)]
    compiled = re.compile(PATTERN)
    timed("plain re.search (unbounded, the old path)", lambda: [compiled.search(s.completion or "") for s in ascii_samples], n)
    timed("regex_match, ASCII text (RE2)", lambda: [score_sample(grader, s) for s in ascii_samples], n)
    timed("regex_match, Unicode text (bounded helper)", lambda: [score_sample(grader, s) for s in unicode_samples],
          len(unicode_samples))
    evil = BuiltinGrader(key="e", function="regex_match", options=BuiltinOptions(reference=r"^(a+)+$"))
    timed("^(a+)+$ on 'a'*34+'!' (RE2)", lambda: score_sample(evil, Sample(id="e", completion="a" * 34 + "!")), 1)
    start = time.perf_counter()
    outcome = score_sample(evil, Sample(id="e", completion="a" * 34 + "é"))
    print(f"^(a+)+$ on 'a'*34+'é' (helper): stopped after {time.perf_counter() - start:.2f} s: {outcome.error}")
    saferegex._helper().close()


if __name__ == "__main__":
    main()
