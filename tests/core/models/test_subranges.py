"""A range judge's subrange expectations run from min up to max inside the score range (issue 43):
"10 to 5" never reaches a judge's prompt. The model refuses it wherever a definition enters (a file,
the CLI, the designer); a row an older release stored still opens, marked invalid, and is neither
exported nor sent to a judge."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from studio.core.checks import check_definition
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.kinds.range_judge import judge_variables
from studio.core.models import Sample, Turn, parse_grader
from studio.core.platforms import platforms
from studio.core.store import Library


def _judge(*subranges: tuple[Any, Any], score_range: tuple[int, int] = (1, 10)) -> dict[str, Any]:
    return {"kind": "range_judge", "key": "quality", "criteria": "c", "score_range": list(score_range),
            "subrange_expectations": [{"min": lo, "max": hi, "expectation": f"{lo}-{hi}"} for lo, hi in subranges]}


@pytest.mark.parametrize(("subranges", "words"), [
    ([(1, 4), (10, 5)], ["subrange 2 runs backwards", "min 10 is above its max 5"]),
    ([(0, 3)], ["subrange 1 (0 to 3) is outside the score range 1 to 10"]),
    ([(1, 7), (8, 11)], ["subrange 2 (8 to 11) is outside the score range 1 to 10"]),
    ([(-3, -7)], ["subrange 1 runs backwards", "min -3 is above its max -7"]),
])
def test_a_backwards_or_outside_subrange_is_refused_with_its_field_named(subranges: list[tuple[int, int]],
                                                                         words: list[str]) -> None:
    with pytest.raises(ValidationError) as raised:
        parse_grader(_judge(*subranges))
    (error,) = raised.value.errors()
    assert error["loc"] == ("subrange_expectations",), error  # the field is named where it is refused
    assert all(word in error["msg"] for word in words), error["msg"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, 2.5, "five"])
def test_a_subrange_bound_that_is_not_a_whole_number_is_refused(bad: Any) -> None:
    with pytest.raises(ValidationError) as raised:
        parse_grader(_judge((bad, 5)))
    assert "subrange_expectations" in str(raised.value)


def test_good_subranges_still_parse_and_a_single_score_subrange_is_fine() -> None:
    judge = parse_grader(_judge((1, 4), (5, 5), (6, 10)))
    assert judge.problems() == [] and judge.subrange_gaps() == []  # type: ignore[attr-defined]


def test_a_file_with_a_backwards_subrange_is_refused_on_import(tmp_path: Path) -> None:
    from studio.core.models.files import DefinitionError, load

    path = tmp_path / "quality.yaml"
    path.write_text("kind: range_judge\nkey: quality\ncriteria: c\nscore_range: [1, 10]\n"
                    "subrange_expectations:\n- {min: 10, max: 5, expectation: good}\n", encoding="utf-8")
    with pytest.raises(DefinitionError) as raised:
        load(path)
    assert "min 10 is above its max 5" in str(raised.value)
    assert raised.value.problems[0][:2] == (5, "subrange_expectations"), "the error is on the field's line"


def test_a_stored_row_from_before_the_rule_opens_marked_invalid(tmp_path: Path) -> None:
    """An older release stored it: the library lists and opens it; the checks fail naming the field,
    an export refuses it, and the judge's prompt is never built with "10 to 5"."""
    library = Library.open(tmp_path / "library.sqlite")
    try:
        library.graders.create(parse_grader(_judge((10, 5)), stored=True))  # as an older release wrote it
        (record,) = library.graders.list()
        assert record.definition.problems() and library.graders.get("quality").definition.problems()
        assert library.graders.versions("quality")[0].definition.problems()
        checks = check_definition(record.definition)
        assert [c.status for c in checks if c.name == "definition"] == ["failed"]
        assert "min 10 is above its max 5" in checks[0].message
        for platform in platforms().values():
            support = platform.can_export(record.definition)
            assert not support.ok
        sample = Sample(id="s", messages=[Turn(role="user", content="q")], completion="a")
        with pytest.raises(JudgeError, match="subrange_expectations: subrange 1 runs backwards"):
            judge_variables(record.definition, sample, [])  # type: ignore[arg-type]
    finally:
        library.close()
