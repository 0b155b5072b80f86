"""OpenAI graders run with OpenAI's rules (issue 46): string_check's four operations on edge cases,
templates (nested fields, output_json, list indexes, missing fields), text_similarity with its
pass_threshold, multi formulas (operators, functions, precedence, errors) and python graders from
OpenAI's graders guide run unchanged in the sandbox with their image_tag recorded."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from studio.core.datasets.shapes import row_to_sample
from studio.core.graders import openai_formula
from studio.core.graders.openai_grader import make_scorer, render, row_context, string_check
from studio.core.models import Outcome, Sample
from studio.core.models.openai_grader import OpenAIGrader
from studio.core.scoring import GradingContext


def row(item: dict[str, Any], output: str, n: int = 1) -> Sample:
    return row_to_sample({"item": item, "sample": {"output_text": output}}, "openai", str(n))


def grade(criterion: dict[str, Any], samples: list[Sample]) -> list[Outcome]:
    async def go() -> list[Outcome]:
        scorer = make_scorer(OpenAIGrader(key="g", criterion=criterion), GradingContext())
        try:
            return await scorer.score_batch(samples)
        finally:
            await scorer.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(("operation", "given", "reference", "expected"), [
    ("eq", "Paris", "Paris", 1.0),
    ("eq", "Paris ", "Paris", 0.0),  # no trimming
    ("eq", "paris", "Paris", 0.0),  # case counts
    ("eq", "", "", 1.0),
    ("ne", "Paris", "Paris", 0.0),
    ("ne", " Paris", "Paris", 1.0),
    ("ne", "", "x", 1.0),
    ("like", "The capital is Paris.", "Paris", 1.0),
    ("like", "the capital is paris.", "Paris", 0.0),
    ("like", "anything", "", 1.0),  # the empty string is in every string
    ("like", "", "a", 0.0),
    ("ilike", "THE CAPITAL IS PARIS", "paris", 1.0),
    ("ilike", "İstanbul", "i̇stanbul", 1.0),  # Python's lower(): İ -> i + combining dot
    ("ilike", "STRASSE", "straße", 0.0),  # lower(), not casefold(): ß stays ß
    ("ilike", "Café", "CAFÉ", 1.0),
    ("ilike", "Cafe\u0301", "café", 0.0),  # no Unicode normalisation
    ("like", "tab\there", "\t", 1.0),
])
def test_string_check_operations(operation: str, given: str, reference: str, expected: float) -> None:
    assert string_check(operation, given, reference) == expected
    criterion = {"type": "string_check", "name": "s", "input": "{{ sample.output_text }}",
                 "reference": "{{ item.ref }}", "operation": operation}
    [outcome] = grade(criterion, [row({"ref": reference}, given)])
    assert outcome.score == expected and outcome.details["passed"] is (expected == 1.0)


def test_templates_read_nested_fields_output_json_and_indexes() -> None:
    sample = row({"a": {"b": ["x", {"c": "deep"}]}, "n": 3, "obj": {"k": 1}}, '{"answer": {"city": "Paris"}}')
    ctx = row_context(sample)
    assert render("{{item.a.b[1].c}}|{{ item.n }}|{{ item.obj }}", ctx) == 'deep|3|{"k": 1}'
    assert render("{{ sample.output_json.answer.city }}", ctx) == "Paris"
    assert render("  {{ sample.output_text }}  ", ctx) == '  {"answer": {"city": "Paris"}}  '
    criterion = {"type": "string_check", "name": "j", "input": "{{ sample.output_json.answer.city }}",
                 "reference": "{{ item.missing }}", "operation": "eq"}
    [missing] = grade(criterion, [sample])
    assert missing.status == "error" and "no field 'missing'" in (missing.error or "")


def test_text_similarity_scores_and_passes_at_its_threshold() -> None:
    criterion = {"type": "text_similarity", "name": "t", "input": "{{ sample.output_text }}",
                 "reference": "{{ item.reference }}", "evaluation_metric": "fuzzy_match", "pass_threshold": 0.8}
    out = grade(criterion, [row({"reference": "Paris"}, "Paris"), row({"reference": "Paris"}, "Pariss"),
                            row({"reference": "Paris"}, "Parma")])
    assert [o.score for o in out] == [1.0, pytest.approx(10 / 11), pytest.approx(6 / 10)]
    assert [o.details["passed"] for o in out] == [True, True, False]


@pytest.mark.parametrize(("formula", "expected"), [
    ("a + b * c", 0.5 + 0.25 * 2),
    ("(a + b) * c", 0.75 * 2),
    ("a - b - c", 0.5 - 0.25 - 2),
    ("c ^ 3 ^ 0", 2.0),  # right-associative
    ("-a ^ 2", -0.25),  # the power binds tighter than the minus
    ("2 ** 3", 8.0),
    ("min(a, b, c) + max(a, c)", 0.25 + 2),
    ("abs(b - a) + floor(c * 1.7) + ceil(0.2)", 0.25 + 3 + 1),
    ("sqrt(c * 8) + exp(0) + log(1)", 4 + 1 + 0),
    ("a / c", 0.25),
    ("1e-1 * .5 + 3.", 3.05),
])
def test_multi_formulas(formula: str, expected: float) -> None:
    tree = openai_formula.parse(formula, {"a", "b", "c"})
    assert openai_formula.evaluate(tree, {"a": 0.5, "b": 0.25, "c": 2.0}) == pytest.approx(expected)


@pytest.mark.parametrize(("formula", "message"), [
    ("a +", "found the end"), ("a b", "expected an operator, found 'b' at column 3"),
    ("pow(a, 2)", "unknown function"), ("d * 2", "unknown grader name"), ("__import__(a)", "unknown function"),
    ("__import__('os')", "unexpected \"'\" at column 12"),
    ("a; b", "unexpected ';' at column 2"), ("abs(a, b)", "takes one argument"), ("", "empty"),
])
def test_bad_formulas_are_refused_with_where(formula: str, message: str) -> None:
    with pytest.raises(openai_formula.FormulaError, match=message):
        openai_formula.parse(formula, {"a", "b"})


def test_multi_runs_its_graders_and_an_undefined_value_is_an_error() -> None:
    criterion = {"type": "multi", "name": "m", "graders": {
        "exact": {"type": "string_check", "name": "exact", "input": "{{ sample.output_text }}",
                  "reference": "{{ item.reference }}", "operation": "eq"},
        "fuzzy": {"type": "text_similarity", "name": "fuzzy", "input": "{{ sample.output_text }}",
                  "reference": "{{ item.reference }}", "evaluation_metric": "fuzzy_match"}},
        "calculate_output": "(exact + fuzzy) / 2 + log(fuzzy) * 0"}
    out = grade(criterion, [row({"reference": "Paris"}, "Paris"), row({"reference": "ab"}, "xy")])
    assert out[0].score == 1.0 and out[0].scores == {"exact": 1.0, "fuzzy": 1.0, "score": 1.0}
    assert out[1].status == "error" and "cannot be computed" in (out[1].error or "")  # log(0): not a made-up 0
    assert not math.isnan(out[0].score or 0)


#: from OpenAI's graders guide (python grader example), unchanged
GUIDE_SOURCE = """from rapidfuzz import fuzz, utils

def grade(sample, item) -> float:
    output_text = sample["output_text"]
    reference_answer = item["reference_answer"]
    return fuzz.WRatio(output_text, reference_answer, processor=utils.default_process) / 100.0
"""

PLAIN_SOURCE = """import json

def grade(sample, item) -> float:
    data = sample["output_json"] or {}
    return 1.0 if data.get("answer") == item["reference_answer"] else 0.0
"""


def test_python_graders_run_unchanged_with_their_image_tag() -> None:
    criterion = {"type": "python", "name": "p", "source": PLAIN_SOURCE, "image_tag": "2025-05-08",
                 "pass_threshold": 0.5}
    out = grade(criterion, [row({"reference_answer": "Paris"}, '{"answer": "Paris"}'),
                            row({"reference_answer": "Paris"}, "not json", 2)])
    assert [o.score for o in out] == [1.0, 0.0], [o.error for o in out]
    assert all(o.details["image_tag"] == "2025-05-08" for o in out)
    assert [o.details["passed"] for o in out] == [True, False]


def test_the_guides_rapidfuzz_grader_runs_unchanged_and_scores_as_rapidfuzz_on_the_host() -> None:
    """The guide's example imports rapidfuzz, one of the packages of OpenAI's image: the sandbox
    shows those packages to a python criterion (read-only), so it scores as rapidfuzz does here."""
    from rapidfuzz import fuzz, utils

    pairs = [("Paris", "Paris"), ("paris, FRANCE!", "Paris France"), ("Zürich", "zurich"), ("", "x"),
             ("The answer is 42.", "42")]
    outcomes = grade({"type": "python", "name": "p", "source": GUIDE_SOURCE},
                     [row({"reference_answer": ref}, out, i) for i, (out, ref) in enumerate(pairs)])
    assert [o.error for o in outcomes] == [None] * len(pairs)
    assert [o.score for o in outcomes] == [fuzz.WRatio(out, ref, processor=utils.default_process) / 100.0
                                           for out, ref in pairs]


@pytest.mark.parametrize("module", ["studio", "sqlalchemy", "keyring", "httpx"])
def test_a_python_grader_importing_a_package_outside_the_image_is_that_samples_error(module: str) -> None:
    """Installed here but not in OpenAI's image: invisible in the sandbox, so each sample names the
    module instead of scoring 0."""
    [outcome] = grade({"type": "python", "name": "p", "source": f"import {module}\n\ndef grade(sample, item):\n    return 1.0\n"},
                      [row({"reference_answer": "Paris"}, "Paris")])
    assert outcome.status in ("error", "invalid") and f"No module named '{module}'" in (outcome.error or "")
