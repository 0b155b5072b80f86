"""Runs inside the platforms venv: score exported function graders with each target's own package.

Input: {"jobs": [{"target", "dir", "file", "entry", "calls": [...]}]}. letta: letta-evals' ToolGrader
loads ``file:entry`` and grades a one-message trajectory; hud: the module's ``grade`` awaited, HUD's
EvaluationResult read; mka1/openai (no offline runner): the exported source's ``grade(sample, item)``
called directly. Output: {"scores": [[score or "error: ..." per call] per job]}. No studio imports.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import types
from datetime import UTC, datetime
from pathlib import Path


def load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def run_job(job: dict, n: int) -> list:
    target, base = job["target"], Path(job["dir"])
    out = []
    if target == "letta":
        from letta_client.types.agents import AssistantMessage
        from letta_evals.graders.tool import ToolGrader
        from letta_evals.models import Sample

        grader = ToolGrader(function=f"{job['file']}:{job['entry']}", base_dir=base)
        for c in job["calls"]:
            sample = Sample(id=0, input=c["input"], ground_truth=c["ground_truth"], extra_vars=c["extra_vars"])
            trajectory = [[AssistantMessage(id="m", date=datetime.now(UTC), content=c["submission"])]]
            try:
                result, _ = await grader.grade(sample, trajectory)
                out.append(result.score)
            except Exception as exc:  # noqa: BLE001 - an error is an outcome to compare
                out.append(f"error: {type(exc).__name__}: {exc}")
        return out
    if target == "hud":
        module = load(base / job["file"], f"hud_export_{n}")
        for c in job["calls"]:
            try:
                result = await module.grade(c["answer"], c["expected"], c["question"], c["row"])
                out.append(result.reward)
            except Exception as exc:  # noqa: BLE001
                out.append(f"error: {type(exc).__name__}: {exc}")
        return out
    if target == "inspect":
        from inspect_ai.model import ModelName, ModelOutput
        from inspect_ai.solver import TaskState

        module = load(base / job["file"], f"inspect_export_{n}")
        for c in job["calls"]:
            state = TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input=c["question"],
                              messages=[], metadata=c["row"],
                              output=ModelOutput.from_content(model="mockllm/model", content=c["answer"] or ""))
            try:
                out.append(float(await module._score(state, c["answer"], c["expected"] or "")))
            except Exception as exc:  # noqa: BLE001
                out.append(f"error: {type(exc).__name__}: {exc}")
        return out
    data = json.loads((base / job["file"]).read_text())
    source = data["grader"]["source"] if target == "mka1" else data["source"]
    module = types.ModuleType(f"{target}_export_{n}")
    exec(compile(source, f"{target}_grader.py", "exec"), module.__dict__)
    for c in job["calls"]:
        try:
            value = module.grade(c["sample"], c["item"])
            if isinstance(value, dict):
                scores = value.get("scores") or {}
                value = scores.get(job["metric"], next(iter(scores.values())))
            out.append(float(value))
        except Exception as exc:  # noqa: BLE001
            out.append(f"error: {type(exc).__name__}: {exc}")
    return out


async def main() -> None:
    data = json.load(sys.stdin)
    scores = [await run_job(job, n) for n, job in enumerate(data["jobs"])]
    print(json.dumps({"scores": scores}))


asyncio.run(main())
