"""The shims are plain stdlib modules: tested in-process here, in the worker by the scorer tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from studio.core.sandbox.launch import GUEST_DIR


@pytest.fixture
def shims() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(GUEST_DIR / "shims"))
    try:
        import adaptive_harmony
        import letta_evals

        yield {"adaptive_harmony": adaptive_harmony, "letta_evals": letta_evals}
    finally:
        sys.path.remove(str(GUEST_DIR / "shims"))
        for name in [m for m in sys.modules if m.startswith(("adaptive_harmony", "letta_evals"))]:
            del sys.modules[name]


def test_string_thread_behaves_like_adaptive_harmony(shims: dict[str, ModuleType]) -> None:
    StringThread = shims["adaptive_harmony"].StringThread
    thread = StringThread([("system", "be brief"), ("user", "2+2?"), ("assistant", "4")], metadata={"k": 1})
    turns = thread.get_turns()
    assert turns[1].role == "user" and turns[1].content == "2+2?"
    assert turns[2] == ("assistant", "4")
    assert thread.messages() == [("system", "be brief"), ("user", "2+2?")]
    assert thread.completion() == "4"
    assert thread.last_content() == "4"
    assert thread.metadata == {"k": 1}
    thread.metadata = {"k": 2}
    assert thread.metadata == {"k": 2}


def test_string_thread_builders_return_new_threads(shims: dict[str, ModuleType]) -> None:
    StringThread = shims["adaptive_harmony"].StringThread
    base = StringThread().system("s").user("u")
    longer = base.assistant("a")
    assert base.completion() is None and len(base) == 2
    assert longer.completion() == "a" and longer.messages() == [("system", "s"), ("user", "u")]
    with pytest.raises(IndexError):
        StringThread().last_content()


def test_string_thread_json_round_trip_drops_metadata(shims: dict[str, ModuleType]) -> None:
    StringThread = shims["adaptive_harmony"].StringThread
    thread = StringThread([("user", "hi"), ("assistant", "yo")], metadata={"secret": 1})
    again = StringThread.from_json(thread.to_json())
    assert again.get_turns() == thread.get_turns()
    assert again.metadata is None


def test_letta_grader_decorator_and_models(shims: dict[str, ModuleType]) -> None:
    letta = shims["letta_evals"]

    @letta.grader
    def exact(sample: object, submission: str) -> object:
        return letta.GradeResult(score=1.0, rationale="same")

    result = exact(letta.Sample(id=1, input="q", ground_truth="a"), "a")
    assert getattr(exact, "__letta_grader__", False)
    assert result.to_payload() == {"__grade_result__": True, "score": 1.0, "rationale": "same", "metadata": {}}
    from letta_evals.decorators import grader as from_submodule
    from letta_evals.models import Sample

    assert from_submodule is letta.grader and Sample(input="x").ground_truth is None
