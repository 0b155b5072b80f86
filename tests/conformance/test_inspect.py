"""Inspect: a task file's includes() scorers, imported by the studio, score every tricky pair as
inspect-ai's own includes() does on a real TaskState (platform_side/inspect_side.py)."""

from __future__ import annotations

from pathlib import Path

from conformance_samples import compare, pairs
from platforms_env import VENV_PYTHON, needs_module, run_json

from studio.core.graders.builtin import score_sample
from studio.core.models import Sample
from studio.core.platforms import get_platform

SIDE = Path(__file__).parent / "platform_side" / "inspect_side.py"
CALLS = ["includes()", "includes(ignore_case=False)", "includes(True)"]
KWARGS = [{}, {"ignore_case": False}, {"ignore_case": True}]


def test_imported_includes_scores_as_inspect(tmp_path: Path) -> None:
    needs_module("inspect_ai")
    task = tmp_path / "task.py"
    task.write_text("from inspect_ai.scorer import includes\n" + "".join(f"S{n} = {c}\n" for n, c in enumerate(CALLS)))
    graders = get_platform("inspect").import_(task).graders
    assert len(graders) == len(CALLS)
    out = run_json([str(VENV_PYTHON), str(SIDE)],
                   {"scorers": [{"name": "includes", "kwargs": k} for k in KWARGS], "pairs": pairs()})
    bad: list[str] = []
    for call, grader, theirs in zip(CALLS, graders, out["scores"], strict=True):
        mine = [float(score_sample(grader, Sample(id="s", completion=o, expected=t)).score or 0.0) for o, t in pairs()]
        bad += compare("inspect", mine, theirs, [f"{call} {o!r} {t!r}" for o, t in pairs()])
    assert not bad, "\n".join(bad[:30])
