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
    assert [(s.where, s.line) for s in result.skipped] == [("@scorer custom", 7)], result.skipped
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
    with pytest.raises(PlatformError, match="f1\\(\\) \\(line 2\\): f1 not imported: argument answer_fn is not a literal") \
            as caught:
        get_platform("inspect").import_(path)
    assert "choice() (line 3): choice not imported" in str(caught.value)


ROUND_TRIP = r'''from inspect_ai.scorer import exact, f1, includes, match, model_graded_fact, model_graded_qa, pattern
A = match('begin', numeric=True)
B = pattern(r'(\d+)', ignore_case=False, match_all=True)
C = exact()
D = f1(stop_words=['a', 'The'])
E = model_graded_fact(partial_credit=True)
F = includes(ignore_case=False)
G = model_graded_qa(template='Q {question} {answer}\n{instructions}', include_history=True, grade_pattern='G=(.)')
H = match()
'''


def test_imported_scorers_export_as_the_same_inspect_scorer_calls(tmp_path: Path) -> None:
    """Inspect's own scorers come back out as themselves (exported task files import to equal graders)."""
    task = tmp_path / "task.py"
    task.write_text(ROUND_TRIP, encoding="utf-8")
    inspect = get_platform("inspect")
    graders = inspect.import_(task).graders
    assert len(graders) == 8
    for grader in graders:
        assert inspect.can_export(grader).ok, grader.key
        [(name, module)] = inspect.export(grader).files.items()
        (tmp_path / name).write_text(module, encoding="utf-8")
        [back] = inspect.import_(tmp_path / name).graders
        assert back.model_copy(update={"key": grader.key}) == grader, module


def test_a_changed_inspect_option_is_refused_with_the_reason() -> None:
    grader = BuiltinGrader(key="m", function="ends_with", options={"trim_punctuation": True, "strip": False})
    support = get_platform("inspect").can_export(grader)
    assert not support.ok and "match no Inspect scorer" in support.reason
    assert not get_platform("hud").can_export(grader).ok
