"""Content checks on the demo library: canonical grader files, every kind present, sane datasets.

The function graders are run in-process against a tiny stdlib stand-in for ``StringThread`` to
check that the demo content itself works; the real sandbox has its own tests.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from studio.core.kinds import kinds
from studio.core.models import dump_grader, parse_grader

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo"
GRADER_FILES = sorted((DEMO / "graders").glob("*.grader.yaml"))
DATASETS = ("qa.jsonl", "rag.jsonl", "json_outputs.jsonl", "qa_pairs.jsonl")
ROLES = {"system", "user", "document", "assistant", "tool"}
MAX_FILE_BYTES = 200 * 1024


def load_yaml(path: Path) -> dict[str, Any]:
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name}: top level is not a mapping"
    return data


def grader_data(path: Path) -> dict[str, Any]:
    """The file's grader fields, schema_version checked and removed."""
    data = load_yaml(path)
    assert data.pop("schema_version", None) == 1, f"{path.name}: schema_version must be 1"
    return data


def load_rows(name: str) -> list[dict[str, Any]]:
    lines = (DEMO / "datasets" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def walk_graders(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The grader and, for composites, every nested component grader."""
    yield data
    for component in data.get("components", []):
        yield from walk_graders(component["grader"])


def all_graders() -> list[dict[str, Any]]:
    return [g for path in GRADER_FILES for g in walk_graders(grader_data(path))]


class StandInThread:
    """The parts of adaptive_harmony's StringThread that the demo graders use."""

    def __init__(self, turns: list[tuple[str, str]] | None = None, metadata: Any = None) -> None:
        self._turns = list(turns or [])
        self.metadata = metadata

    def get_turns(self) -> list[tuple[str, str]]:
        return list(self._turns)

    def completion(self) -> str | None:
        if self._turns and self._turns[-1][0] == "assistant":
            return self._turns[-1][1]
        return None

    def messages(self) -> list[tuple[str, str]]:
        return self._turns[:-1] if self.completion() is not None else list(self._turns)

    def last_content(self) -> str:
        return self._turns[-1][1]


@pytest.fixture
def adaptive_harmony(monkeypatch: pytest.MonkeyPatch) -> type[StandInThread]:
    module = types.ModuleType("adaptive_harmony")
    module.StringThread = StandInThread  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adaptive_harmony", module)
    return StandInThread


def test_there_are_demo_graders() -> None:
    assert len(GRADER_FILES) >= 15


@pytest.mark.parametrize("path", GRADER_FILES, ids=lambda p: p.name)
def test_grader_file_is_canonical(path: Path) -> None:
    assert path.read_text(encoding="utf-8").startswith("schema_version: 1\n")
    assert path.stat().st_size < MAX_FILE_BYTES
    data = grader_data(path)
    grader = parse_grader(data)
    assert dump_grader(grader) == data
    assert path.name == f"{grader.key}.grader.yaml"
    assert grader.name and grader.description and grader.tags


def test_keys_are_unique() -> None:
    keys = [g["key"] for g in all_graders()]
    assert len(keys) == len(set(keys))


def test_every_kind_is_shown() -> None:
    top_level = {grader_data(path)["kind"] for path in GRADER_FILES}
    assert set(kinds()) <= top_level


def test_every_function_contract_is_shown() -> None:
    contracts = {g.get("contract", "adaptive") for g in all_graders() if g["kind"] == "function"}
    assert contracts == {"adaptive", "mka1_sample", "mka1_batch", "letta", "promptfoo"}


def test_judges_use_the_scripted_demo_endpoint() -> None:
    judges = [g for g in all_graders() if g["kind"].endswith("judge") or g["kind"] == "prebuilt"]
    assert judges
    for judge in judges:
        assert judge.get("endpoint") == "demo-scripted-judge", judge["key"]
        assert "not a real model" in judge["description"], judge["key"]


def test_composites_show_a_penalty_and_a_combinator() -> None:
    composites = [g for g in all_graders() if g["kind"] == "composite"]
    weighted = [c for c in composites if c.get("mode", "weighted") == "weighted"]
    assert any(comp.get("weight", 1.0) < 0 for c in weighted for comp in c["components"])
    assert any(c.get("mode") in {"any", "all"} for c in composites)


@pytest.mark.parametrize("name", DATASETS)
def test_dataset_rows_have_the_adaptive_shape(name: str) -> None:
    path = DEMO / "datasets" / name
    assert path.stat().st_size < MAX_FILE_BYTES
    rows = load_rows(name)
    assert len(rows) >= 50
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    for row in rows:
        assert set(row) == {"id", "messages", "completion", "metadata"}, row["id"]
        assert isinstance(row["completion"], str)
        assert row["messages"], row["id"]
        for message in row["messages"]:
            assert message["role"] in ROLES, row["id"]
            assert isinstance(message["content"], str) and message["content"], row["id"]
        assert row["messages"][-1]["role"] == "user", row["id"]
        assert isinstance(row["metadata"], dict)
        assert isinstance(row["metadata"].get("expected"), str), row["id"]


def test_rag_rows_carry_two_to_four_documents() -> None:
    for row in load_rows("rag.jsonl"):
        documents = [m for m in row["messages"] if m["role"] == "document"]
        assert 2 <= len(documents) <= 4, row["id"]


def test_json_rows_name_their_required_keys() -> None:
    rows = load_rows("json_outputs.jsonl")
    for row in rows:
        expected = json.loads(row["metadata"]["expected"])
        assert sorted(expected) == sorted(row["metadata"]["required_keys"]), row["id"]
    malformed = 0
    for row in rows:
        try:
            json.loads(row["completion"])
        except ValueError:
            malformed += 1
    assert 0 < malformed < len(rows)


def adaptive_sources() -> list[Any]:
    return [
        pytest.param(g["source"], id=g["key"])
        for g in all_graders()
        if g["kind"] == "function" and g.get("contract", "adaptive") == "adaptive"
    ]


@pytest.mark.parametrize("source", adaptive_sources())
def test_adaptive_function_scores_every_qa_sample(
    source: str, adaptive_harmony: type[StandInThread]
) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<demo grader>", "exec"), namespace)
    grade = namespace["grade"]
    assert asyncio.iscoroutinefunction(grade)

    async def score_all() -> list[Any]:
        mock = adaptive_harmony([("user", "What is 2+2?"), ("assistant", "4")], {})
        scores = [await grade(mock)]
        for row in load_rows("qa.jsonl"):
            turns = [(m["role"], m["content"]) for m in row["messages"]]
            turns.append(("assistant", row["completion"]))
            scores.append(await grade(adaptive_harmony(turns, row["metadata"])))
        return scores

    for score in asyncio.run(score_all()):
        assert isinstance(score, (int, float)) and not isinstance(score, bool)
        assert math.isfinite(score) and 0.0 <= score <= 1.0
