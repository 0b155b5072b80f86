from __future__ import annotations

import pytest

from studio.core.graders.builtin import score_sample
from studio.core.graders.text import normalize, token_f1
from studio.core.models import BuiltinGrader, BuiltinOptions, Extractor, Sample, ToolCall, Turn
from studio.core.models.extractors import extract


def grade(function: str, completion: str, expected: str | None = None, **options: object) -> float | None:
    grader = BuiltinGrader(key="g", function=function, options=BuiltinOptions(**options))
    return score_sample(grader, Sample(id="1", completion=completion, expected=expected)).score


@pytest.mark.parametrize(
    ("function", "completion", "expected", "options", "score"),
    [
        ("exact_match", "  Paris ", "Paris", {}, 1.0),          # Letta: stripped, case-sensitive
        ("exact_match", "paris", "Paris", {}, 0.0),
        ("exact_match", "The Paris!", "paris", {"normalize": True}, 1.0),  # HUD normalise
        ("contains", "It is PARIS.", "paris", {}, 1.0),         # case-insensitive by default
        ("contains", "It is PARIS.", "paris", {"case_sensitive": True}, 0.0),
        ("contains_any", "red car", None, {"values": ["blue", "red"]}, 1.0),
        ("contains_any", "red car", None, {"values": ["blue"]}, 0.0),
        ("contains_all", "red blue", None, {"values": ["blue", "red"]}, 1.0),
        ("contains_all", "red", None, {"values": ["blue", "red"]}, 0.0),
        ("regex_match", "id 1a2b3c4d-aaaa", r"[0-9a-f]{8}-", {}, 1.0),
        ("regex_match", "anything", "([unclosed", {}, 0.0),      # invalid regex -> 0
        ("ascii_printable_only", "ok\nline", None, {}, 1.0),
        ("ascii_printable_only", "caf\u00e9", None, {}, 0.0),
        ("numeric_match", "The answer is 3.14159", "3.14", {"tolerance": 0.01}, 1.0),
        ("numeric_match", "about 1,000 people", "1000", {}, 0.0),  # HUD: the comma ends the number
        ("numeric_match", "about 1,000 people", "1000", {"thousands_separators": True}, 1.0),
        ("numeric_match", "pi is .314e1", "3.14", {}, 1.0),
        ("contains", "a b", " b ", {}, 0.0),                       # no strip (Letta, HUD)
        ("contains", "a b", " b ", {"strip": True}, 1.0),
        ("exact_match", "x", "", {}, 0.0),                         # empty ground truth (Letta)
        ("exact_match", "", "", {"empty_submission_zero": False, "empty_reference_zero": False}, 1.0),
        ("exact_match", "", "x", {"negate": True}, 0.0),          # empty submission: 0 before negation
        ("numeric_match", "no number", "4", {}, 0.0),
        ("is_json", '{"a": 1}', None, {}, 1.0),
        ("is_json", "{a: 1}", None, {}, 0.0),
        ("exact_match", "4", "4", {"negate": True}, 0.0),
        ("exact_match", "4", None, {}, 0.0),                      # no ground truth -> 0 (Letta)
    ],
)
def test_builtin_semantics(function: str, completion: str, expected: str | None, options: dict, score: float) -> None:
    assert grade(function, completion, expected, **options) == score


def test_hud_text_helpers() -> None:
    assert normalize("The  Quick, brown fox!") == "quick brown fox"
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(0.8)
    assert token_f1("", "") == 0.0  # HUD's f1_score: no token on a side scores 0
    assert normalize("caf\u00e9\u200bau\u2212lait \U0001F600 20\u00b0") == "caf\u00e9 au lait 20"


def test_extractors() -> None:
    sample = Sample(id="1", messages=[
        Turn(role="user", content="find it"),
        Turn(role="assistant", content="first", tool_calls=[ToolCall(id="c1", name="search", arguments='{"q": "x"}')]),
        Turn(role="tool", name="search", content="result text", tool_call_id="c1"),
    ], completion="done. ANSWER: 42")
    assert extract(sample, None) == "done. ANSWER: 42"
    assert extract(sample, Extractor(kind="first_assistant")) == "first"
    assert extract(sample, Extractor(kind="all_assistant", config={"separator": "|"})) == "first|done. ANSWER: 42"
    assert extract(sample, Extractor(kind="tool_arguments", config={"tool_name": "search"})) == '{"q": "x"}'
    assert extract(sample, Extractor(kind="tool_arguments", config={"tool_name": "nope"})) == "{}"
    assert extract(sample, Extractor(kind="tool_output", config={"tool_name": "search"})) == "result text"
    assert extract(sample, Extractor(kind="after_marker", config={"marker": "ANSWER:"})) == "42"
    assert extract(sample, Extractor(kind="pattern", config={"pattern": r"ANSWER: (\d+)", "group": 1})) == "42"
    outcome = score_sample(BuiltinGrader(key="g", function="contains", extractor=Extractor(kind="memory_block")), sample)
    assert outcome.status == "error" and "agent" in (outcome.error or "")
