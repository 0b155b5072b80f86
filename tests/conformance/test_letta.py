"""Letta evals: built-in tool graders and every extractor score as letta-evals' own code does.

Multi-turn trajectories with several tool calls, tool-only assistant turns, empty turns and the
tricky texts, graded by ``letta_evals.graders.tool.ToolGrader`` in the platforms venv
(platform_side/letta_side.py) and by the studio's built-in scorer.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from conformance_samples import TEXTS, compare
from platforms_env import VENV_PYTHON, needs_module, run_json

from studio.core.graders.builtin import score_sample
from studio.core.models import BuiltinGrader, Extractor, Sample, Turn
from studio.core.platforms import get_platform

SIDE = Path(__file__).parent / "platform_side" / "letta_side.py"
FUNCTIONS = ["exact_match", "contains", "regex_match", "ascii_printable_only"]
EXTRACTORS: list[tuple[str, dict[str, Any]]] = [
    ("last_assistant", {}), ("first_assistant", {}), ("all_assistant", {}), ("all_assistant", {"separator": " | "}),
    ("last_turn", {}), ("last_turn", {"separator": ""}),
    ("pattern", {"pattern": r"ANSWER: (\w+)"}), ("pattern", {"pattern": r"ANSWER: (\w+)", "group": 1}),
    ("pattern", {"pattern": r"ANSWER: (\w+)", "search_all": True}),
    ("pattern", {"pattern": r"(\w+): (\w+)", "search_all": True, "group": 1}),
    ("pattern", {"pattern": r"\d+", "search_all": True}), ("pattern", {"pattern": "[unclosed"}),
    ("tool_arguments", {"tool_name": "search"}), ("tool_arguments", {"tool_name": "lookup"}),
    ("tool_output", {"tool_name": "search"}), ("tool_output", {"tool_name": "lookup"}),
    ("after_marker", {"marker": "ANSWER:"}), ("after_marker", {"marker": "ANSWER:", "include_marker": True}),
]


def call(cid: str, name: str, args: str) -> dict[str, str]:
    return {"id": cid, "name": name, "arguments": args}


def trajectories(text: str) -> list[list[dict[str, Any]]]:
    """Flat chats around one tricky text (user/assistant/tool turns as the studio stores them)."""
    u = {"role": "user", "content": "question"}
    return [
        [u, {"role": "assistant", "content": text}],
        [u, {"role": "assistant", "content": "", "tool_calls": [call("c1", "search", '{"q": 1}'),
                                                                  call("c2", "lookup", text)]},
         {"role": "tool", "content": "found " + text, "tool_call_id": "c1"},
         {"role": "tool", "content": "second", "tool_call_id": "c2"},
         {"role": "assistant", "content": text},
         {"role": "assistant", "content": "", "tool_calls": [call("c3", "search", '{"q": 2}')]},
         {"role": "tool", "content": "later", "tool_call_id": "c3"}],
        [u, {"role": "assistant", "content": f"ANSWER: first ANSWER: {text}"}, u,
         {"role": "assistant", "content": text}, {"role": "assistant", "content": "ANSWER: b and ANSWER: c 12"}],
        [u, {"role": "assistant", "content": "", "tool_calls": [call("c9", "search", text)]}],
        [],
        [u, {"role": "assistant", "content": text}, u],
        [{"role": "system", "content": "sys"}, u, {"role": "assistant", "content": f"x: y {text}",
                                                    "tool_calls": [call("c4", "lookup", "{}")]},
         {"role": "tool", "content": text, "tool_call_id": "c4"}, {"role": "assistant", "content": "ANSWER:"}],
    ]


def samples(count: int = 260, seed: int = 26) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        text = rng.choice(TEXTS)
        turns = rng.choice(trajectories(text))
        truth = rng.choice([None, "", text, text.strip(), rng.choice(TEXTS)])
        found.append({"turns": turns, "ground_truth": truth})
    return found


def ours(function: str, extractor: str, config: dict[str, Any], sample: dict[str, Any]) -> float | str:
    grader = BuiltinGrader(key="g", function=function, extractor=Extractor(kind=extractor, config=config))
    turns = [Turn(**t) for t in sample["turns"]]
    out = score_sample(grader, Sample(id="s", messages=turns, expected=sample["ground_truth"]))
    return "error" if out.status == "error" else float(out.score or 0.0)


@pytest.fixture(scope="module")
def letta_run() -> dict[str, Any]:
    needs_module("letta_evals")
    configs = [{"function": f, "extractor": e, "config": c} for f in FUNCTIONS for e, c in EXTRACTORS]
    data = samples()
    return {"configs": configs, "samples": data,
            "out": run_json([str(VENV_PYTHON), str(SIDE)], {"configs": configs, "samples": data})}


def test_builtins_and_extractors_score_as_letta(letta_run: dict[str, Any]) -> None:
    bad: list[str] = []
    platform = get_platform("letta")
    for config, theirs in zip(letta_run["configs"], letta_run["out"]["scores"], strict=True):
        grader = BuiltinGrader(key="g", function=config["function"],
                               extractor=Extractor(kind=config["extractor"], config=config["config"]))
        assert platform.can_export(grader).ok, platform.can_export(grader).reason
        mine = [ours(config["function"], config["extractor"], config["config"], s) for s in letta_run["samples"]]
        labels = [f"{config} {s}" for s in letta_run["samples"]]
        bad += compare("letta", mine, theirs, labels)
    assert not bad, "\n".join(bad[:30])
