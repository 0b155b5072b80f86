"""A jury travels where a platform can express it (HUD combine, Inspect multi_scorer) and loads in
that platform's own client package; everywhere else it is refused by name, as a pairwise judge is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from platforms_env import VENV_PYTHON, env, needs_module

from studio.core.models import JuryGrader, parse_grader
from studio.core.platforms import get_platform, platforms
from studio.core.platforms.inspect import FACT_TEMPLATE

HERE = Path(__file__).resolve().parent


def jury(kind: str, aggregation: str) -> JuryGrader:
    juror = ({"kind": "criteria_judge", "criteria": [{"text": "The answer is correct."}]} if kind == "criteria"
             else {"kind": "letter_judge", "template": FACT_TEMPLATE})
    return parse_grader({"kind": "jury", "key": f"panel-{kind}", "aggregation": aggregation, "jurors": [
        {"name": f"j{i}", "weight": float(i), "grader": {**juror, "key": f"j{i}"}} for i in (1, 2, 3)]})  # type: ignore[return-value]


def test_hud_writes_combine_over_the_jurors() -> None:
    hud = get_platform("hud")
    assert "majority" in hud.can_export(jury("criteria", "majority")).reason
    assert "criteria judge" in hud.can_export(jury("letter", "mean")).reason
    text = next(iter(hud.export(jury("criteria", "weighted")).files.values()))
    assert text.count("LLMJudgeGrader.grade(") == 3 and "combine_all(" not in text
    for i in (1, 2, 3):  # the jurors' weights (HUD's combine normalises positive weights)
        assert f"weight={float(i)!r}, name='j{i}'" in text
    lowest = next(iter(hud.export(jury("criteria", "min")).files.values()))
    assert "combine_all(" in lowest and lowest.count("LLMJudgeGrader.grade(") == 3


def test_inspect_writes_a_multi_scorer_with_the_reducer() -> None:
    inspect = get_platform("inspect")
    text = next(iter(inspect.export(jury("letter", "majority")).files.values()))
    assert "multi_scorer([" in text and "'mode'" in text and text.count("model_graded_fact(") == 3
    assert "'mean'" in next(iter(inspect.export(jury("letter", "mean")).files.values()))
    assert "no min" in inspect.can_export(jury("letter", "min")).reason
    assert "letter judges" in inspect.can_export(jury("criteria", "mean")).reason


def test_everywhere_else_a_jury_and_a_pairwise_judge_are_refused_by_name() -> None:
    pairwise = parse_grader({"kind": "pairwise_judge", "key": "pair"})
    for name, platform in platforms().items():
        assert not platform.can_export(pairwise).ok, name
        if name not in ("hud", "inspect"):
            reason = platform.can_export(jury("criteria", "mean")).reason
            assert "jury" in reason, (name, reason)


@pytest.mark.parametrize(("name", "module", "grader"), [
    ("hud", "hud.graders", jury("criteria", "mean")), ("inspect", "inspect_ai", jury("letter", "majority"))])
def test_jury_exports_load_in_the_clients(name: str, module: str, grader: JuryGrader, tmp_path: Path) -> None:
    needs_module(module)
    for rel, text in get_platform(name).export(grader).files.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    done = subprocess.run([str(VENV_PYTHON), str(HERE / "check_with_clients.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=180, env=env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "checked 1 files" in done.stdout or "checked 1 file" in done.stdout, done.stdout
