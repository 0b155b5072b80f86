"""File > Import of an OpenAI eval in the window makes what ``grader-studio import EVAL.json --items``
makes (issue 46): the graders, the suite named after the eval and, from the items file beside it, the
dataset; a field with no effect here is listed by its path, as the CLI lists it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "openai"


def test_window_import_of_an_eval_makes_its_suite_and_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              window: Any) -> None:
    shown: list[str] = []
    monkeypatch.setattr(window.grader_actions.messages, "error", lambda title, text: shown.append(str(text)))
    shutil.copy(DEMO / "support.eval.json", tmp_path / "support.eval.json")
    shutil.copy(DEMO / "support.items.jsonl", tmp_path / "support.items.jsonl")
    created = window.grader_actions.import_file(str(tmp_path / "support.eval.json"))
    assert len(created) == 6 and shown == []
    library = window.ctx.library
    suite = library.suites.get("support-answers").definition
    assert suite.grader_keys() == created and suite.name == "Support answers"
    assert library.datasets.get("support-answers").sample_count == 8


def test_window_import_names_what_has_no_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: Any) -> None:
    shown: list[str] = []
    monkeypatch.setattr(window.grader_actions.messages, "error", lambda title, text: shown.append(str(text)))
    path = tmp_path / "one.json"
    path.write_text('{"type": "string_check", "name": "x", "input": "{{ sample.output_text }}", '
                    '"reference": "a", "operation": "eq", "weight": 2}', encoding="utf-8")
    assert window.grader_actions.import_file(str(path)) == ["x"]
    [text] = shown
    assert "grader.weight: not a field of OpenAI's string_check grader" in text
    assert window.ctx.library.suites.list() == []  # one grader is not an eval: no suite of one
