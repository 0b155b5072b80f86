"""The text lane of built-in checks (``text_check``: whole columns of completion and expected)
gives, sample for sample, what the one-sample path (``score_value``) gives, whatever the options."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from studio.core.graders.builtin import BuiltinScorer, score_value, text_check
from studio.core.models import BuiltinGrader, BuiltinOptions, Extractor, Outcome, Sample

TEXTS = ["Paris", "  Paris ", "paris", "PARIS!", "", " ", "The Paris", "Paris is nice", "caf\u00e9", "Stra\u00dfe",
         "STRASSE", "a\tb", "1,000", "x" * 50]
REFERENCES: list[str | None] = ["Paris", "paris", " Paris", "", None, "is", "nice", "STRASSE", "a b", "1,000"]
OPTIONS = [
    {}, {"strip": True}, {"strip": False}, {"case_sensitive": True}, {"case_sensitive": False},
    {"case_fold": "casefold", "case_sensitive": False}, {"normalize": True}, {"negate": True},
    {"empty_submission_zero": False}, {"empty_reference_zero": False},
    {"empty_submission_zero": False, "empty_reference_zero": False}, {"empty_reference_error": True},
    {"reference": "Paris"}, {"reference": ""}, {"negate": True, "empty_reference_zero": False},
    {"normalize": True, "normalization": "inspect"},
]
FUNCTIONS = ["exact_match", "contains", "starts_with", "ends_with", "ascii_printable_only"]


def same(lane: float | Outcome, one: float | Outcome) -> bool:
    if isinstance(one, Outcome) or isinstance(lane, Outcome):
        return (isinstance(lane, Outcome) and isinstance(one, Outcome)
                and lane.model_dump(exclude={"duration_ms"}) == one.model_dump(exclude={"duration_ms"}))
    return type(lane) is type(one) is float and repr(lane) == repr(one)


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_text_lane_gives_what_one_sample_at_a_time_gives(function: str, options: dict) -> None:
    grader = BuiltinGrader(key="g", function=function, options=BuiltinOptions(**options))
    check = text_check(grader)
    if check is None:  # an option the lane leaves to score_values (the engine then reads JSON)
        assert options.get("normalization") == "inspect" and function == "exact_match"
        return
    pairs = list(itertools.product(TEXTS, REFERENCES))
    # whole batches, and batches of one (an empty text changes how a batch is scored)
    batches = [pairs] + [[p] for p in pairs]
    for batch in batches:
        got = check([s for s, _ in batch], [r for _, r in batch])
        want = [score_value(grader, Sample(id="1", completion=s, expected=r)) for s, r in batch]
        assert len(got) == len(want)
        for (s, r), lane, one in zip(batch, got, want, strict=True):
            assert same(lane, one), (function, options, s, r, lane, one)


def test_no_lane_for_what_reads_more_than_two_texts() -> None:
    assert text_check(BuiltinGrader(key="g", function="exact_match", extractor=Extractor(kind="last_turn"))) is None
    assert text_check(BuiltinGrader(key="g", function="exact_match",
                                    options=BuiltinOptions(reference_field="answer"))) is None
    assert text_check(BuiltinGrader(key="g", function="regex_match")) is None
    assert text_check(BuiltinGrader(key="g", function="exact_match",
                                    options=BuiltinOptions(numeric_reference=True))) is None
    assert "texts" not in BuiltinScorer(BuiltinGrader(key="g", function="token_f1")).lanes


def test_a_sample_without_completion_is_read_from_its_json() -> None:
    """The answer in the messages: the row carries the sample's JSON, scored the long way."""
    grader = BuiltinGrader(key="g", function="exact_match")
    scorer = BuiltinScorer(grader)
    in_messages = Sample(id="m", messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "Paris"}],
                         expected="Paris")
    rows = [(0, "a", "Paris", "Paris", None), (1, "m", None, "Paris", in_messages.model_dump_json()),
            (2, "b", "Rome", "Paris", None)]
    got = asyncio.run(scorer.score_texts(rows))
    assert got == [1.0, score_value(grader, in_messages), 0.0]
    assert got[1] == 1.0


def test_ascii_printable_is_the_printable_ascii_range_plus_newlines() -> None:
    from studio.core.graders.text import ascii_printable

    for code in range(0x2100):
        c = chr(code)
        for text in (c, f"a{c}b", f"{c}\n", f"\r{c}"):
            assert ascii_printable(text) == all(32 <= ord(x) <= 126 or x in "\n\r" for x in text), repr(text)
    assert ascii_printable("") and ascii_printable("\n\r") and not ascii_printable("\t")
