"""Whole-definition checks, whatever the kind: what ``validate`` and the window's checks panel show."""

from __future__ import annotations

from studio.core.checks import check_definition
from studio.core.models import parse_grader


def statuses(data: dict) -> dict[str, str]:
    return {c.name: c.status for c in check_definition(parse_grader(data))}


def test_a_range_judge_with_a_gap_in_its_subranges_gets_a_warning() -> None:
    got = statuses({"kind": "range_judge", "key": "r", "criteria": "c", "score_range": [1, 5],
                    "subrange_expectations": [{"min": 1, "max": 2, "expectation": "bad"}]})
    assert got == {"definition": "passed", "subranges": "warning"}


def test_a_bad_regular_expression_fails_and_a_good_one_passes() -> None:
    bad = {"kind": "builtin", "key": "b", "function": "regex_match", "options": {"reference": "("}}
    good = {**bad, "options": {"reference": "^a+$"}}
    assert statuses(bad)["pattern"] == "failed"
    assert statuses(good)["pattern"] == "passed"


def test_a_composite_names_its_components_checks_and_needs_a_positive_weight() -> None:
    got = statuses({"kind": "composite", "key": "c", "components": [
        {"name": "re", "weight": -1.0, "grader": {"kind": "builtin", "key": "x", "function": "regex_match",
                                                   "options": {"reference": "["}}}]})
    assert got == {"definition": "passed", "weights": "failed", "re: pattern": "failed"}


def test_inspect_kinds_get_their_structural_checks() -> None:
    from studio.core.models import BuiltinGrader, LetterJudge

    def statuses(definition) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
        return [(c.name, c.status) for c in check_definition(definition)[1:]]

    assert statuses(LetterJudge(key="a", template="{answer} {question")) == [("template", "failed")]
    assert statuses(LetterJudge(key="b", template="{question} only")) == [("template", "warning")]
    assert statuses(LetterJudge(key="c", template="{question} {answer}")) == [("template", "passed")]
    assert statuses(BuiltinGrader(key="r", function="regex_extract")) == [("pattern", "failed")]
    assert statuses(BuiltinGrader(key="r", function="regex_extract", options={"pattern": "(x"})) == [("pattern", "failed")]
