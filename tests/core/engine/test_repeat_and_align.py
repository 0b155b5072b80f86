"""``run --repeat`` and ``align`` against our scripted judge over real HTTP on 127.0.0.1.

Align's improvement is real, not asserted: the scripted judge fails short answers ("Einstein" for
"Albert Einstein") that humans pass; those samples carry ``[[case:short]]``, and the judge follows a
few-shot example of the same case (studio/core/demo/fake_shots.py). Align must find such
examples among the training disagreements only, and the held-out κ must rise because of them.
"""

from __future__ import annotations

import json

import pytest

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.agreement import agreement
from studio.core.engine.align import AlignOptions, align
from studio.core.engine.consistency import consistency, repeat_group, repeat_run
from studio.core.engine.runner import Progress, RunOptions
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.labels import LabelInput
from studio.core.store import Conflict, Library
from studio.core.store.endpoints import EndpointRepository


@pytest.fixture
def lib(library: Library, fake_judge: FakeJudgeServer) -> Library:
    EndpointRepository.of(library).save(EndpointConfig(
        name="fake", base_url=fake_judge.base_url, model="fake-judge", retry_backoff=0.01, timeout=5.0,
        max_concurrency=8, max_retries=1))
    library.graders.create(BinaryJudge(key="correct", criteria="The answer is correct.", endpoint="fake"))
    return library


def _sample(i: int, kind: str) -> tuple[Sample, str]:
    question = [Turn(role="user", content=f"Question {i}: who wrote the papers on relativity?")]
    if kind == "short":  # the rule says FAIL (the reference is not all there); humans say PASS
        return Sample(id=f"s{i}", messages=question, completion=f"Einstein (#{i}) [[case:short]]",
                      expected="Albert Einstein"), "PASS"
    if kind == "right":
        return Sample(id=f"s{i}", messages=question, completion=f"It was Albert Einstein (#{i}).",
                      expected="Albert Einstein"), "PASS"
    return Sample(id=f"s{i}", messages=question, completion=f"It was Isaac Newton (#{i}).",
                  expected="Albert Einstein"), "FAIL"


def _dataset(lib: Library, n: int = 45) -> dict[str, str]:
    kinds = ["short", "right", "wrong"]
    pairs = [_sample(i, kinds[i % 3]) for i in range(n)]
    lib.datasets.create("qa", [s for s, _ in pairs])
    lib.labels.put_many("qa", [LabelInput(sample_id=s.id, verdict=v, note="the surname alone is enough"
                                          if "case:short" in (s.completion or "") else "")
                               for s, v in pairs])
    return {s.id: v for s, v in pairs}


def test_align_learns_from_training_disagreements_and_measures_on_held_out_samples(lib: Library) -> None:
    _dataset(lib)
    report = align(lib, "correct", "qa", AlignOptions(holdout=0.3, seed=3, endpoint="fake"))
    held = set(report["holdout_ids"])
    assert report["n_holdout"] == len(held) == 14 and report["n_train"] == 31
    assert report["measured_on"] == "held-out samples only"
    assert report["old_version"] == 1 and report["new_version"] == 2
    # the examples come from training disagreements only: none is a held-out sample
    examples = lib.graders.version("correct", 2).definition.examples
    assert len(examples) == report["shots_added"] > 0
    held_completions = {f"(#{sid[1:]})" for sid in held}
    assert not any(any(tag in e.completion for tag in held_completions) for e in examples)
    assert all(e.verdict == "PASS" and e.reasoning == "the surname alone is enough" for e in examples)
    before, after = report["before"], report["after"]
    assert before["n"] == after["n"] == 14  # only the held-out part was graded and measured
    assert before["grader_version"] == 1 and after["grader_version"] == 2
    assert before["disagreements"] > 0 and after["disagreements"] == 0
    assert after["cohen_kappa"] == pytest.approx(1.0) and before["cohen_kappa"] < 0.8
    assert report["change"]["kappa_delta"] > 0 and report["change"]["n"] == 14
    assert len(before["kappa_ci"]) == 2
    # the runs behind the figures graded exactly the held-out samples
    for side in (before, after):
        graded = {r["sample_id"] for r in lib.runs.results(side["run_id"])}
        assert graded == held


def test_align_with_nothing_to_learn_saves_no_version(lib: Library) -> None:
    lib.datasets.create("easy", [_sample(i, "right" if i % 2 else "wrong")[0] for i in range(10)])
    lib.labels.put_many("easy", [LabelInput(sample_id=f"s{i}", verdict="PASS" if i % 2 else "FAIL")
                                 for i in range(10)])
    report = align(lib, "correct", "easy", AlignOptions(endpoint="fake"))
    assert report["new_version"] is None and report["shots_added"] == 0
    assert lib.graders.get("correct").current_version == 1


def test_align_refuses_too_few_labels_and_a_locked_judge(lib: Library) -> None:
    _dataset(lib, 6)
    lib.labels.put_many("qa", [LabelInput(sample_id=f"s{i}") for i in range(3, 6)])  # clear three
    with pytest.raises(Conflict, match="at least 4"):
        align(lib, "correct", "qa", AlignOptions(endpoint="fake"))
    lib.graders.set_locked("correct", True)
    with pytest.raises(Conflict, match="locked"):
        align(lib, "correct", "qa", AlignOptions(endpoint="fake"))


def test_repeat_bypasses_the_cache_and_reports_spread_and_self_agreement(lib: Library,
                                                                         fake_judge: FakeJudgeServer) -> None:
    truth = _dataset(lib, 12)
    seen_runs: list[int] = []

    def changes_its_mind(progress: Progress) -> None:
        # after the first repetition the judge starts passing sample s2 (it failed it before)
        if progress.finished and progress.run_id not in seen_runs:
            seen_runs.append(progress.run_id)
            if len(seen_runs) == 1:
                fake_judge.add_rule(r"Isaac Newton \(#2\)", json.dumps({"reasoning": "now fine", "verdict": "PASS"}))

    infos = repeat_run(lib, "correct", "qa", RunOptions(endpoint="fake"), 3, on_progress=changes_its_mind)
    assert [i.settings["repeat_index"] for i in infos] == [1, 2, 3]
    assert all(i.settings["use_cache"] is False and i.status == "completed" for i in infos)
    assert all(i.counts.get("ok") == 12 and not any(r["cached"] for r in lib.runs.results(i.id)) for i in infos)
    assert [r.id for r in repeat_group(lib, infos[2].id)] == [i.id for i in infos]
    report = consistency(lib, [i.id for i in infos])
    assert report["repeats"] == 3 and report["n"] == 12 and report["unstable"] == 1
    worst = report["samples"][0]
    assert worst["sample_id"] == "s2" and worst["verdicts"] == ["FAIL", "PASS", "PASS"] and worst["spread"] == 1.0
    assert 0 < report["fleiss_kappa"] < 1 and 0 < report["krippendorff_alpha"] < 1
    assert truth["s2"] == "FAIL"
    # the first repetition still agrees with the labels better than the last
    assert agreement(lib, infos[0].id)["accuracy"] > agreement(lib, infos[2].id)["accuracy"]


def test_repeat_needs_two_repetitions(lib: Library) -> None:
    _dataset(lib, 3)
    with pytest.raises(ValueError, match="at least 2"):
        repeat_run(lib, "correct", "qa", RunOptions(endpoint="fake"), 1)


def test_align_a_range_judge_reports_spearman_on_held_out_samples(lib: Library) -> None:
    from studio.core.models import RangeJudge

    lib.graders.create(RangeJudge(key="quality", criteria="The answer is right.", score_range=(1, 5),
                                  endpoint="fake", evaluation_steps=["Compare with the reference."]))
    kinds = ["short", "right", "wrong"]
    pairs = [_sample(i, kinds[i % 3]) for i in range(30)]
    lib.datasets.create("scored", [s for s, _ in pairs])
    lib.labels.put_many("scored", [LabelInput(sample_id=s.id, score=5 if v == "PASS" else 1) for s, v in pairs])
    report = align(lib, "quality", "scored", AlignOptions(holdout=0.4, seed=2, endpoint="fake"))
    assert report["statistic"] == "spearman" and report["new_version"] == 2
    shots = lib.graders.version("quality", 2).definition.shots
    assert shots and all(s.score == 5 for s in shots)
    before, after = report["before"], report["after"]
    assert before["n"] == after["n"] == 12
    assert after["spearman"] == pytest.approx(1.0) and before["spearman"] < after["spearman"]
    assert report["change"]["spearman_delta"] > 0
