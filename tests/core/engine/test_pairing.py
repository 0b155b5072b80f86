"""Two models' outputs of the same prompts, paired for a pairwise judge and judged in both orders."""

from __future__ import annotations

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.pairing import PairingError, pair_datasets
from studio.core.engine.runner import run_grader
from studio.core.models import parse_grader
from studio.core.store import Library


def test_pairs_by_id_and_prompt_then_judges_both_orders(library: Library, fake_judge: FakeJudgeServer) -> None:
    add_endpoint(library, fake_judge)
    library.datasets.create("model-a", [qa("1", "Capital of France?", "Paris", "Paris"),
                                        qa("2", "Capital of Japan?", "Osaka", "Tokyo"),
                                        qa("3", "Capital of Peru?", "Lima", "Lima"),
                                        qa("4", "Capital of Chad?", "N'Djamena", "N'Djamena")])
    library.datasets.create("model-b", [qa("1", "Capital of France?", "Lyon", "Paris"),
                                        qa("2", "Capital of Japan?", "Tokyo", "Tokyo"),
                                        qa("3", "Capital of Peru, please?", "Lima", "Lima"),
                                        qa("5", "Capital of Mali?", "Bamako", "Bamako")])
    report = pair_datasets(library, "model-a", "model-b", "a-vs-b")
    assert report == {"dataset": "a-vs-b", "paired": 2, "only_in_a": 1, "only_in_b": 1, "different_prompts": ["3"]}
    library.graders.create(parse_grader({"kind": "pairwise_judge", "key": "which"}))
    info = run_grader(library, "which", "a-vs-b")
    results = library.runs.results(info.id)
    assert [r["details"]["pairwise"]["verdict"] for r in results] == ["A", "B"]
    assert [r["score"] for r in results] == [1.0, 0.0]
    assert info.aggregates["pairwise"] == {"win_a": 0.5, "win_b": 0.5, "tie": 0.0, "inconsistent": 0.0,
                                           "position_consistency": 1.0, "first_position_rate": 0.5}
    # each call shows one answer first; the two calls of a sample swap them
    calls = results[0]["details"]["calls"]
    assert [c["label"] for c in calls] == ["A shown first", "B shown first"]
    first, swapped = (c["messages"][-1]["content"] for c in calls)
    assert first.index("Paris") < first.index("Lyon") and swapped.index("Lyon") < swapped.index("Paris")


def test_pairing_refuses_what_has_nothing_to_pair(library: Library) -> None:
    library.datasets.create("one", [qa("1", "q?", "a")])
    library.datasets.create("two", [qa("9", "q?", "b")])
    with pytest.raises(PairingError, match="share no sample"):
        pair_datasets(library, "one", "two", "x")
    with pytest.raises(PairingError, match="itself"):
        pair_datasets(library, "one", "one", "x")
