"""Runs inside the platforms venv: score with inspect-ai's own scorers on a real TaskState.

Input: {"scorers": [{"name": "match", "kwargs": {...}}], "pairs": [[output, target]]}.
Output: {"scores": [[the Score's value as a float per pair] per scorer]} (CORRECT 1.0, INCORRECT 0.0,
f1's number as it is). No studio imports.
"""

from __future__ import annotations

import asyncio
import json
import sys

from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import CORRECT, INCORRECT, Target, exact, f1, includes, match, pattern
from inspect_ai.solver import TaskState

SCORERS = {"includes": includes, "match": match, "pattern": pattern, "exact": exact, "f1": f1}


def state(output: str) -> TaskState:
    return TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input="q", messages=[],
                     output=ModelOutput.from_content(model="mockllm/model", content=output))


def number(value: object) -> float:
    if value == CORRECT:
        return 1.0
    if value == INCORRECT:
        return 0.0
    assert isinstance(value, (int, float)), value
    return float(value)


async def main() -> None:
    data = json.load(sys.stdin)
    scores = []
    for spec in data["scorers"]:
        score = SCORERS[spec["name"]](**spec["kwargs"])
        row = []
        for output, target in data["pairs"]:
            result = await score(state(output), Target(target))
            row.append(number(result.value))
        scores.append(row)
    print(json.dumps({"scores": scores}))


asyncio.run(main())
