"""What "New grader" starts from: a small working definition per kind, or a shipped demo file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.models import GraderDefinition, parse_grader
from studio.core.models import files as definition_files
from studio.core.paths import demo_dir

FUNCTION_SOURCE = '''\
async def grade(thread):
    """Score the last assistant turn against metadata["expected"] (1.0 = match)."""
    completion = (thread.completion() or "").strip().lower()
    expected = str((thread.metadata or {}).get("expected", "")).strip().lower()
    return 1.0 if expected and expected in completion else 0.0
'''

STARTERS: dict[str, dict[str, Any]] = {
    "function": {"source": FUNCTION_SOURCE, "contract": "adaptive"},
    "binary_judge": {"criteria": "The response answers the user's question correctly and directly."},
    "range_judge": {
        "criteria": "Rate how well the response answers the user's question.",
        "score_range": [1, 5],
        "evaluation_steps": ["Identify what the user asked.", "Check the answer is correct.",
                             "Assign a score using the criteria."],
        "subrange_expectations": [
            {"min": 1, "max": 2, "expectation": "Wrong, off-topic or a refusal."},
            {"min": 3, "max": 4, "expectation": "Correct but vague or incomplete."},
            {"min": 5, "max": 5, "expectation": "Correct, complete and concise."},
        ],
    },
    "rubric_judge": {"prompt": "Question: {input}\nAnswer: {submission}\nReference: {ground_truth}\n\n"
                               "Score the answer from 0 to 1 for correctness."},
    "criteria_judge": {"criteria": [{"text": "The answer is factually correct.", "weight": 1.0},
                                    {"text": "The answer is concise.", "weight": 0.5}]},
    "prebuilt": {"metric_type": "faithfulness"},
    "external_endpoint": {"url": "http://127.0.0.1:8766"},
    "bash": {"command": "exit 0", "timeout_seconds": 30},
    "builtin": {"function": "exact_match", "options": {"normalize": True}},
    "composite": {"components": [
        {"name": "exact", "weight": 1.0,
         "grader": {"kind": "builtin", "key": "part-exact", "function": "exact_match"}},
    ]},
}


def starter(kind: str, key: str, name: str = "") -> GraderDefinition:
    return parse_grader({"kind": kind, "key": key, "name": name, **STARTERS[kind]})


def templates() -> dict[str, Path]:
    """Shipped example graders by display label."""
    found: dict[str, Path] = {}
    folder = demo_dir() / "graders"
    for path in sorted(folder.glob("*.grader.yaml")):
        found[path.name.removesuffix(".grader.yaml")] = path
    return found


def from_template(path: Path, key: str, name: str = "") -> GraderDefinition:
    data = definition_files.to_document(definition_files.load(path))
    data.pop("schema_version", None)
    data["key"] = key
    if name:
        data["name"] = name
    return parse_grader(data)
