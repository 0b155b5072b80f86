"""Run inside the platforms venv (see .ci/platforms.sh): load exported files with the real clients.

Usage: python check_with_clients.py DIR. Prints one line per checked file; exits 1 on the first
file a client rejects. Kept free of studio imports: the platforms venv does not have the studio.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import py_compile
import sys
from pathlib import Path


def check_adaptive(path: Path) -> None:
    from adaptive_sdk.graphql_client import GraderCreateInput

    grader = GraderCreateInput.model_validate(json.loads(path.read_text()))
    grader.model_dump(mode="json", by_alias=True, exclude_unset=True)
    script = path.with_suffix(".py")
    py_compile.compile(str(script), doraise=True)


def check_mka1(path: Path) -> None:
    from mka1.models import EvalPythonGrader, EvalTask

    data = json.loads(path.read_text())
    model = EvalTask if path.name.endswith(".task.json") else EvalPythonGrader
    model.model_validate(data)


def check_openai(path: Path) -> None:
    from openai.types.graders import (
        LabelModelGrader,
        MultiGrader,
        PythonGrader,
        ScoreModelGrader,
        StringCheckGrader,
        TextSimilarityGrader,
    )

    models = {"string_check": StringCheckGrader, "text_similarity": TextSimilarityGrader,
              "score_model": ScoreModelGrader, "label_model": LabelModelGrader, "python": PythonGrader}
    data = json.loads(path.read_text())
    if data["type"] == "multi":
        # the SDK types ``graders`` as one grader; the API takes a map name -> grader: check each
        for sub in data["graders"].values():
            models[sub["type"]].model_validate(sub)
        MultiGrader.model_validate({**data, "graders": next(iter(data["graders"].values()))})
    else:
        models[data["type"]].model_validate(data)


def check_hud(path: Path) -> None:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert asyncio.iscoroutinefunction(module.grade)
    body = path.read_text().split("async def grade")[1]
    if "LLMJudgeGrader.grade(" not in body and "BashGrader" not in body:  # no model calls: run it
        result = asyncio.run(module.grade("Paris, France", "paris"))
        assert 0.0 <= result.reward <= 1.0, result


def check_inspect(path: Path) -> None:
    """Load the module and run its scorer on a stand-in state (no model is called)."""
    from types import SimpleNamespace

    from inspect_ai.model import ChatMessageUser
    from inspect_ai.scorer import Score, Target, value_to_float

    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    name = path.name.removesuffix("_inspect.py")
    scorer = getattr(module, name)()
    if "model_graded_" in path.read_text() or "JUDGE = json.loads" in path.read_text():
        # Inspect's model-graded scorers and the studio's judges: built here, grading needs a model
        assert callable(scorer)
        return
    state = SimpleNamespace(
        input_text="What is the capital of France?",
        messages=[ChatMessageUser(content="What is the capital of France?")],
        output=SimpleNamespace(completion="Paris"),
        metadata={},
    )
    result = asyncio.run(scorer(state, Target("Paris")))
    # Inspect's own scorers (match, includes ...) answer C/I, exported custom ones a number
    assert isinstance(result, Score) and 0.0 <= value_to_float()(result.value) <= 1.0, result


CHECKS = {".adaptive.json": check_adaptive, ".task.json": check_mka1, ".grader.json": check_mka1,
          ".openai.json": check_openai, "_hud.py": check_hud,
          "_inspect.py": check_inspect}


def main(root: Path) -> int:
    count = 0
    for path in sorted(root.rglob("*")):
        for suffix, check in CHECKS.items():
            if path.name.endswith(suffix):
                try:
                    check(path)
                except Exception as exc:  # report which file and why, then fail
                    print(f"REJECTED {path.relative_to(root)}: {type(exc).__name__}: {exc}")
                    return 1
                count += 1
                print(f"ok {path.relative_to(root)}")
    print(f"checked {count} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
