"""Generated Python is built from literals, never pasted text (issue 11 item 14), and the promptfoo
import reads what promptfoo reads (issue 12)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from studio.core.graders.builtin import score_sample
from studio.core.models import BuiltinGrader, FunctionGrader, Sample
from studio.core.platforms import get_platform
from studio.core.platforms.promptfoo import split_values

HOSTILE = 'Tricky """ name \\ with \'\'\' quotes\n"""; import os; os.system("x") #'
ADAPTIVE = "async def grade(thread):\n    return 1.0 if thread.completion() == 'x' else 0.0\n"


@pytest.mark.parametrize("target", ["inspect", "hud", "mka1", "openai", "promptfoo", "letta"])
@pytest.mark.parametrize("grader", [
    BuiltinGrader(key="g", name=HOSTILE, function="contains", options={"strip": False}),
    FunctionGrader(key="f", name=HOSTILE, description=HOSTILE, source=ADAPTIVE),
], ids=["builtin", "function"])
def test_exported_python_from_a_hostile_name_is_valid(target: str, grader) -> None:  # type: ignore[no-untyped-def]
    platform = get_platform(target)
    if not platform.can_export(grader).ok:
        return
    for rel, text in platform.export(grader).files.items():
        if rel.endswith(".py"):
            tree = ast.parse(text)  # valid Python
            assert not any(isinstance(n, ast.Import) and any(a.name == "os" for a in n.names) for n in tree.body)
            doc = ast.get_docstring(tree)
            if doc and grader.name in doc:
                assert HOSTILE in doc


def test_promptfoo_splits_a_comma_separated_value_as_promptfoo_does() -> None:
    assert split_values('Paris, 42 ,"a,b",, "q\\"x"') == ["Paris", "42", "a,b", 'q"x']
    grader = get_platform("promptfoo").from_assert({"type": "contains-any", "value": "red, blue"}, "k", Path("."))
    assert grader.options.values == ["red", "blue"]


def test_promptfoo_regex_is_javascript() -> None:
    grader = get_platform("promptfoo").from_assert({"type": "regex", "value": r"^\d+$"}, "k", Path("."))
    assert grader.options.regex_dialect == "javascript"
    assert score_sample(grader, Sample(id="1", completion="\uff11\uff12")).score == 0.0  # fullwidth: not \d in JS
    python = BuiltinGrader(key="p", function="regex_match", options={"reference": r"^\d+$"})
    assert score_sample(python, Sample(id="1", completion="\uff11\uff12")).score == 1.0  # the named difference


def test_is_json_refuses_nan_and_infinity() -> None:
    grader = BuiltinGrader(key="j", function="is_json")
    assert score_sample(grader, Sample(id="1", completion='{"a": NaN}')).score == 0.0
    assert score_sample(grader, Sample(id="1", completion='{"a": 1}')).score == 1.0
