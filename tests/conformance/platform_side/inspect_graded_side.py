"""Runs inside the platforms venv: inspect-ai's own model_graded_qa()/model_graded_fact() on a real
TaskState, graded by Inspect's mockllm model answering a fixed text (no model is needed offline).

Input: {"scorers": [{"name", "kwargs"}], "cases": [{"turns": [[role, text]], "output", "target",
"metadata", "answer"}]}. Output: {"results": [[[prompt sent, score as a float or "unscored"] per
case] per scorer]}. No studio imports.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageUser,
    ModelName,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import Target, model_graded_fact, model_graded_qa, value_to_float
from inspect_ai.solver import TaskState

SCORERS = {"model_graded_qa": model_graded_qa, "model_graded_fact": model_graded_fact}
MESSAGE = {"user": ChatMessageUser, "assistant": ChatMessageAssistant}


def state(case: dict) -> TaskState:
    turns = [MESSAGE[role](content=text) for role, text in case["turns"]]
    return TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input=turns,
                     messages=[*turns, ChatMessageAssistant(content=case["output"])],
                     output=ModelOutput.from_content(model="mockllm/model", content=case["output"]),
                     metadata=case["metadata"])


async def main() -> None:
    data = json.load(sys.stdin)
    to_float = value_to_float()
    results = []
    for spec in data["scorers"]:
        row = []
        for case in data["cases"]:
            fixed = ModelOutput.from_content(model="mockllm/model", content=case["answer"])
            fixed.usage = ModelUsage()  # given usage: mockllm counts no tokens (no tokenizer download)
            grader = get_model("mockllm/model", custom_outputs=[fixed])
            score = SCORERS[spec["name"]](**spec["kwargs"], model=grader)
            result = await score(state(case), Target(case["target"]))
            prompt = result.metadata["grading"][0].text
            value = result.value
            unscored = value is None or (isinstance(value, float) and math.isnan(value))
            row.append([prompt, "unscored" if unscored else to_float(value)])
        results.append(row)
    print(json.dumps({"results": results}))


asyncio.run(main())
