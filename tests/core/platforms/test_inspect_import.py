"""Inspect import reads a task file's scorers from its syntax tree, never executing it (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.graders.builtin import score_sample
from studio.core.models import BuiltinGrader, LetterJudge, Sample
from studio.core.platforms import PlatformError, detect_platform, get_platform

TASK = '''from inspect_ai import Task, task
from inspect_ai.scorer import includes, model_graded_fact, scorer, Score
import os
os.system("touch SHOULD_NOT_EXIST")


@scorer(metrics=[])
def custom():
    async def score(state, target):
        return Score(value=1)
    return score


@task
def capitals():
    return Task(dataset=[], scorer=[includes(), includes(ignore_case=False), model_graded_fact()])
'''


def test_includes_scorers_import_and_the_rest_are_refused_by_line(tmp_path: Path) -> None:
    path = tmp_path / "capitals.py"
    path.write_text(TASK, encoding="utf-8")
    assert detect_platform(path).name == "inspect"
    result = get_platform("inspect").import_(path)
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists()  # never executed
    graders = result.graders
    assert [g.options.case_sensitive for g in graders if isinstance(g, BuiltinGrader)] == [False, True]
    assert any(w.startswith("line 7:") and "@scorer custom" in w for w in result.warnings), result.warnings
    [judge] = [g for g in graders if isinstance(g, LetterJudge)]  # model_graded_fact(): Inspect's prompt
    assert "[Expert]: {criterion}" in judge.template and not judge.partial_credit
    # Inspect's includes casefolds and reads an empty target as contained
    folded = graders[0]
    assert score_sample(folded, Sample(id="1", completion="Stra\u00dfe", expected="STRASSE")).score == 1.0
    assert score_sample(folded, Sample(id="1", completion="x", expected="")).score == 1.0


def test_a_file_without_mapped_scorers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.py"
    path.write_text("from inspect_ai.scorer import f1, choice\nS = f1(answer_fn=str.strip)\nC = choice()\n",
                    encoding="utf-8")
    with pytest.raises(PlatformError, match="line 2: f1\\(\\): argument answer_fn is not a literal") as caught:
        get_platform("inspect").import_(path)
    assert "line 3: choice()" in str(caught.value)
