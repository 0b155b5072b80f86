"""Key redaction of a judge's answer: what masking a known key (and its disguises and encodings)
costs per answer, against a bare ``str.replace`` of the key (what it would cost to catch only the
key as itself).

Every answer of a judge whose key the process knows is cleaned before it is parsed, cached or
stored (studio/core/judges/http/redaction.py), so this sits on the judge path once per call. Texts
are word-like ASCII and a Unicode variant, 1 KB and 16 KB, with no key in them (the usual case) and
with a base64 echo of it. Run: ``python bench/redaction.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import string
import time

from studio.core.judges.http.redaction import redact_text

KEY = "sk-live-7Qx9Vb2Lm4Np8Rt6Zw3Ky5AbCdEfGh12"


def words(rng: random.Random, size: int, alphabet: str) -> str:
    out: list[str] = []
    while sum(map(len, out)) + len(out) < size:
        out.append("".join(rng.choices(alphabet, k=rng.randint(2, 9))))
    return " ".join(out)


def per_call(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=300)
    repeat = parser.parse_args().repeat
    rng = random.Random(38)
    secrets = frozenset({KEY})
    echo = base64.b64encode(f"user:{KEY}".encode()).decode()
    print(f"load {os.getloadavg()[0]:.1f}; best of 5 x {repeat}")
    print(f"{'text':<34} {'redact_text':>12} {'str.replace':>12} {'ratio':>7}")
    for label, alphabet in (("ASCII", string.ascii_lowercase), ("Unicode", string.ascii_lowercase + "éàüßж")):
        for size in (1_000, 16_000):
            clean = words(rng, size, alphabet)
            for case, text in ((f"{label} {size // 1000} KB", clean), (f"{label} {size // 1000} KB, base64 echo",
                                                                      clean[: size // 2] + echo + clean[size // 2:])):
                ours = per_call(lambda text=text: redact_text(text, secrets), repeat)
                floor = per_call(lambda text=text: text.replace(KEY, "***"), repeat)
                assert KEY not in redact_text(text, secrets)
                print(f"{case:<34} {ours:10.1f}us {floor:10.2f}us {ours / floor:6.0f}x")


if __name__ == "__main__":
    main()
