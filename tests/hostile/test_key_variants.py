"""An endpoint that echoes the API key it was sent, in any cheap disguise (reversed, spaced, split,
a zero-width space or full-width letters inside, hex, base64 at any alignment), gets it stored nowhere: not in ``results.raw``,
``rationale``, ``details``, ``judge_cache.response`` nor an export; and fields of an answer the studio
does not read are not stored at all."""

from __future__ import annotations

import base64
import binascii
import http.server
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from judge_helpers import library_bytes, qa, served

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.judges.http.redaction import keep_needed, redact_text
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

KEY = "sk-live-7Qx9Vb2Lm4Np8Rt6Zw3Ky5"
HALF = len(KEY) // 2


def disguises(key: str) -> dict[str, str]:
    return {
        "reversed": key[::-1],
        "spaced": " ".join(key),
        "split": f"{key[:HALF]} ... and the rest: {key[HALF:]}",
        "zero-width": "\u200b".join(key),
        "full-width": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key),
        "dotted upper": ".".join(key.upper()),
        "hex": key.encode().hex(),
        "HEX": key.encode().hex().upper(),
        "base64": base64.b64encode(key.encode()).decode(),
        "base64 basic auth": base64.b64encode(f"user:{key}".encode()).decode(),
        "base64 url-safe, shifted": base64.urlsafe_b64encode(f"ab{key}?>".encode()).decode(),
        "base64 in a sentence": base64.b64encode(f"my key is {key}, keep it".encode()).decode(),
    }


def decoded_leaks(text: str) -> list[str]:
    """Halves of KEY found by decoding ``text``'s hex and base64-looking runs at every offset
    (the test's own decoder, not the studio's)."""
    halves = (KEY[:HALF - 2].encode(), KEY[HALF:].encode())
    found = []
    for run in re.findall(r"[0-9A-Fa-f]{8,}", text):
        for start in (0, 1):
            body = run[start:len(run) - (len(run) - start) % 2]
            found += [f"hex {run}" for h in halves if h in binascii.unhexlify(body)]
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}", text):
        for start in range(4):
            body = run[start:]
            body = body[:len(body) - len(body) % 4].replace("-", "+").replace("_", "/")
            found += [f"base64 {run}" for h in halves if h in base64.b64decode(body)]
    return found


def leaked(text: str) -> list[str]:
    """Which disguises of KEY (or a half of it) are readable in ``text``, by the same folding."""
    from studio.core.judges.http.redaction import _skeleton

    skeleton = _skeleton(text)[0]
    key = _skeleton(KEY)[0]
    return [name for name, piece in (("key", key), ("reversed", key[::-1]), ("first half", key[:HALF - 2]),
                                     ("second half", key[HALF:])) if piece in skeleton]


@pytest.mark.parametrize("name", list(disguises(KEY)))
def test_each_disguise_is_masked_and_the_words_around_it_stay(name: str) -> None:
    text = f"The verdict is PASS. Your key: {disguises(KEY)[name]}. The answer is correct."
    cleaned = redact_text(text, frozenset({KEY}))
    assert leaked(cleaned) == [] and decoded_leaks(cleaned) == [], (name, cleaned)
    assert cleaned.startswith("The verdict is PASS. Your key: ") and cleaned.endswith(". The answer is correct.")


def test_only_the_fields_the_studio_reads_are_kept() -> None:
    body = {"id": "x", "model": "m", "usage": {"prompt_tokens": 1}, "debug": {"headers": "Authorization: Bearer k"},
            "choices": [{"index": 0, "finish_reason": "stop", "echo": "k",
                         "message": {"role": "assistant", "content": "PASS", "request_headers": "k"}}]}
    assert keep_needed(body) == {"id": "x", "model": "m", "usage": {"prompt_tokens": 1}, "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "PASS"}}]}


class Echoing(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
        said = "; ".join(f"{name}: {text}" for name, text in disguises(sent).items())
        content = json.dumps({"reasoning": f"keys {said}", "verdict": "PASS"})
        body = {"id": "c1", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                                       "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2},
                "debug": {"received_headers": {"authorization": f"Bearer {sent[::-1]}"}, "note": "kept-nowhere"}}
        reply = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echoing() -> Iterator[str]:
    with served(Echoing) as url:
        yield url


def test_an_echoed_disguised_key_is_stored_nowhere(library: Library, db_path: Path, echoing: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    EndpointRepository.of(library).save(EndpointConfig(name="echo", base_url=echoing, model="m",
                                                       api_key_env="ECHO_API_KEY", retry_backoff=0.01))
    library.graders.create(BinaryJudge(key="j", criteria="c", endpoint="echo"))
    library.datasets.create("d", [qa("s1", "q", "a"), qa("s2", "q2", "b")])
    run = run_grader(library, "j", "d", RunOptions(concurrency=2))
    assert run.counts == {"ok": 2}
    rows = library.runs.results(run.id)
    assert all("keys reversed: ***" in row["rationale"] for row in rows), rows[0]["rationale"]
    with library.engine.connect() as conn:
        cached = [r[0] for r in conn.exec_driver_sql("SELECT response FROM judge_cache")]
    assert cached
    for text in [json.dumps(rows, default=str, ensure_ascii=False), *cached]:
        assert leaked(text) == [] and decoded_leaks(text) == [], text
        assert "kept-nowhere" not in text and "received_headers" not in text
    library.engine.dispose()
    stored = library_bytes(db_path).decode("utf-8", "replace")
    assert leaked(stored) == [] and decoded_leaks(stored) == []


def _every_piece_masked(text: str, key: str) -> str:
    """The test's own masking of ``text``: every run of ``fragment_length`` letters of ``key``
    (forwards or reversed) found by trying each piece of the key in turn, runs merged."""
    from studio.core.judges.http.redaction import MASK, _skeleton, fragment_length

    skeleton, places = _skeleton(text)
    key = _skeleton(key)[0]
    size = min(len(key), fragment_length(key))
    covered = [False] * len(skeleton)
    for variant in (key, key[::-1]):
        for start in range(len(variant) - size + 1):
            piece = variant[start:start + size]
            at = skeleton.find(piece)
            while at >= 0:
                covered[at:at + size] = [True] * size
                at = skeleton.find(piece, at + 1)
    out, i = [], 0
    n = 0
    while n < len(skeleton):
        if not covered[n]:
            n += 1
            continue
        end = n
        while end + 1 < len(skeleton) and covered[end + 1]:
            end += 1
        out.append(text[i:places[n]] + MASK)
        i = places[end] + 1
        n = end + 1
    return "".join(out) + text[i:]


def test_the_anchored_search_masks_exactly_what_trying_every_piece_masks() -> None:
    """Keys and texts over a four-letter alphabet, so pieces of the key overlap, repeat and nearly
    match everywhere: the studio's anchored search masks the same characters as the plain one."""
    import random

    rng = random.Random(38)
    for _ in range(400):
        key = "".join(rng.choices("abab01", k=rng.randint(8, 40)))
        pieces = [key[rng.randint(0, len(key) // 2):][: rng.randint(4, len(key))] for _ in range(3)]
        noise = ["".join(rng.choices("ab0 1.-", k=rng.randint(0, 30))) for _ in range(4)]
        text = "".join(x for pair in zip(noise, [*pieces, key[::-1]], strict=True) for x in pair)
        assert redact_text(text, frozenset({key})) == _every_piece_masked(text, key), (key, text)
