"""Runs inside the platforms venv: score with inspect-ai's own scorers on a real TaskState.

Input: {"scorers": [{"name": "includes", "kwargs": {...}}], "pairs": [[output, target]]}.
Output: {"scores": [[1.0 when CORRECT, 0.0 otherwise, per pair] per scorer]}. No studio imports.
"""

from __future__ import annotations

import asyncio
import json
import sys

from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import CORRECT, Target, includes
from inspect_ai.solver import TaskState

SCORERS = {"includes": includes}


def state(output: str) -> TaskState:
    return TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input="q", messages=[],
                     output=ModelOutput.from_content(model="mockllm/model", content=output))


async def main() -> None:
    data = json.load(sys.stdin)
    scores = []
    for spec in data["scorers"]:
        score = SCORERS[spec["name"]](**spec["kwargs"])
        row = []
        for output, target in data["pairs"]:
            result = await score(state(output), Target(target))
            row.append(1.0 if result.value == CORRECT else 0.0)
        scores.append(row)
    print(json.dumps({"scores": scores}))


asyncio.run(main())
