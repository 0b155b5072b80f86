"""Runs inside the platforms venv: grade with letta-evals' own ToolGrader, extractors and built-ins.

Input: {"configs": [{"function", "extractor", "config"}], "samples": [{"turns": [...], "ground_truth"}]}.
A flat chat (user / assistant with tool_calls / tool turns) becomes Letta's trajectory here, by this
file's own reading of Letta's message types: each user turn opens a turn; an assistant turn's text is
an AssistantMessage, its tool calls one ToolCallMessage; a tool turn is a ToolReturnMessage.
Output: {"scores": [[score or "error" per sample] per config]}. No studio imports here.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime

from letta_client.types import ToolReturnMessage
from letta_client.types.agents import AssistantMessage, ToolCallMessage
from letta_client.types.agents.tool_call import ToolCall
from letta_evals.graders.tool import ToolGrader
from letta_evals.models import Sample

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def to_trajectory(turns: list[dict]) -> list[list]:
    out: list[list] = []
    n = 0
    for turn in turns:
        n += 1
        if turn["role"] == "user":
            out.append([])
            continue
        if turn["role"] not in ("assistant", "tool"):
            continue
        if not out:
            out.append([])
        if turn["role"] == "tool":
            out[-1].append(ToolReturnMessage(id=f"m{n}", date=NOW, status="success",
                                             tool_call_id=turn["tool_call_id"], tool_return=turn["content"]))
            continue
        if turn.get("content") or not turn.get("tool_calls"):
            out[-1].append(AssistantMessage(id=f"m{n}", date=NOW, content=turn.get("content", "")))
        if turn.get("tool_calls"):
            calls = [ToolCall(name=c["name"], arguments=c["arguments"], tool_call_id=c["id"]) for c in turn["tool_calls"]]
            out[-1].append(ToolCallMessage(id=f"c{n}", date=NOW, tool_call=calls[0], tool_calls=calls))
    return out


async def main() -> None:
    data = json.load(sys.stdin)
    samples = [(Sample(id=i, input="q", ground_truth=s["ground_truth"]), to_trajectory(s["turns"]))
               for i, s in enumerate(data["samples"])]
    scores = []
    for c in data["configs"]:
        grader = ToolGrader(function=c["function"], extractor=c["extractor"], extractor_config=c["config"])
        row = []
        for sample, trajectory in samples:
            try:
                result, _ = await grader.grade(sample, trajectory)
                row.append(result.score)
            except Exception:  # noqa: BLE001 - an error is an outcome to compare
                row.append("error")
        scores.append(row)
    print(json.dumps({"scores": scores}))


asyncio.run(main())
