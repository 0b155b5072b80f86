from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    BuiltinOptions,
    Component,
    CompositeGrader,
    FunctionGrader,
    RangeJudge,
    Subrange,
)
from studio.core.models import files as definition_files
from studio.core.paths import demo_dir


def test_yaml_is_readable_and_round_trips(tmp_path: Path) -> None:
    grader = FunctionGrader(key="exact", source="async def grade(thread):\n    return 1.0\n", tags=["qa"])
    text = definition_files.to_yaml(grader)
    assert text.startswith("schema_version: 1\nkind: function\n")
    assert "source: |" in text  # code stays a readable block
    path = definition_files.save(grader, tmp_path / "exact.grader.yaml")
    assert definition_files.load(path) == grader
    json_path = definition_files.save(grader, tmp_path / "exact.grader.json")
    assert definition_files.load(json_path) == grader


def test_nested_composite_round_trips() -> None:
    grader = CompositeGrader(key="combo", components=[
        Component(grader=BuiltinGrader(key="a", function="contains"), weight=2),
        Component(name="penalty", grader=BuiltinGrader(key="b", function="regex_match",
                                                     options=BuiltinOptions(reference="sorry")), weight=-0.5),
    ])
    assert definition_files.loads(definition_files.to_yaml(grader)) == grader


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("schema_version: 1\nkind: builtin\nkey: x\nfunction: nope\n", 4, "function"),
        ("schema_version: 1\nkind: range_judge\nkey: r\ncriteria: c\nscore_range: [5, 1]\n", None, ""),
        ("schema_version: 1\nkind: wat\nkey: x\n", 2, "kind"),
        ("schema_version: 1\nkind: builtin\nkey: Bad Key\nfunction: contains\n", 3, "key"),
        ("schema_version: 2\nkind: builtin\nkey: x\nfunction: contains\n", 1, "schema_version"),
        ('{"kind": "composite", "key": "c",\n "components": [{"grader": {"kind": "builtin",\n'
         ' "key": "k", "function": "contains", "options": {"tolerance": "x"}}}]}', 3,
         "components.0.grader.options.tolerance"),
        ("kind: builtin\nkey: [unclosed\n", 3, ""),
    ],
)
def test_errors_name_field_and_line(text: str, line: int | None, field: str) -> None:
    with pytest.raises(definition_files.DefinitionError) as info:
        definition_files.loads(text, "g.grader.yaml")
    problems = info.value.problems
    if field:
        assert any(p[1] == field and p[0] == line for p in problems), problems
    else:
        assert problems and (line is None or problems[0][0] == line)
    assert str(info.value).startswith("g.grader.yaml:")


def test_json_schema_covers_every_kind() -> None:
    schema = definition_files.json_schema()
    text = str(schema)
    for kind in ("function", "binary_judge", "range_judge", "rubric_judge", "criteria_judge", "prebuilt",
                 "external_endpoint", "bash", "builtin", "composite"):
        assert f"'{kind}'" in text


def test_range_judge_rules() -> None:
    judge = RangeJudge(key="r", criteria="c", subrange_expectations=[Subrange(min=1, max=2, expectation="bad"),
                                                                      Subrange(min=4, max=5, expectation="good")])
    assert judge.subrange_gaps() == [3]
    with pytest.raises(ValueError, match="outside"):
        RangeJudge(key="r", criteria="c", shots=[{"score": 9}])


def test_every_demo_grader_round_trips_through_its_file(tmp_path: Path) -> None:
    paths = sorted((demo_dir() / "graders").glob("*.grader.yaml"))
    assert paths
    for path in paths:
        grader = definition_files.load(path)
        again = definition_files.load(definition_files.save(grader, tmp_path / path.name))
        assert again == grader, path.name
        assert isinstance(grader, BinaryJudge | FunctionGrader) or grader.key
