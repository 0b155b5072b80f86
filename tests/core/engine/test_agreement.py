"""Agreement of a run with human labels, and run-versus-run comparison, on stored results.

The results are written as the engine writes them (``runs.write_results``), so these tests pin
the arithmetic: NA/error/invalid are excluded by reason, κ equals scikit-learn's, an undefined κ
stays undefined, and compare's flips and McNemar p follow from the data.
"""

from __future__ import annotations

import math
import socket
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from studio.core.engine.agreement import agreement, compare
from studio.core.engine.runner import RunOptions, start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BuiltinGrader, Outcome, RangeJudge, Sample
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.labels import LabelInput
from studio.core.store import Conflict, Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db


N = 30


@pytest.fixture
def lib(library: Library, request: pytest.FixtureRequest) -> Library:
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    # results are written by hand here; the endpoint only satisfies the check that a run could reach
    # it (a listening socket: the run's preflight connects, nothing is ever asked)
    listener = socket.create_server(("127.0.0.1", 0))
    request.addfinalizer(listener.close)
    port = listener.getsockname()[1]
    library.endpoints.save(EndpointConfig(name="judge", base_url=f"http://127.0.0.1:{port}/v1", model="m"))
    library.graders.create(RangeJudge(key="r", criteria="good?", score_range=(1, 5), endpoint="judge"))
    library.datasets.create("d", [Sample(id=f"s{i}", completion=str(i)) for i in range(N)])
    library.datasets.create("other", [Sample(id="s0", completion="x")])
    return library


def _run(lib: Library, outcomes: dict[int, Outcome], grader: str = "g", threshold: float = 0.5) -> int:
    run = start_run(lib, grader, "d", RunOptions(pass_threshold=threshold))
    lib.runs.write_results(run.id, [(i, f"s{i}", o) for i, o in outcomes.items()])
    lib.runs.set_status(run.id, "completed", aggregates=run_aggregates(lib, run.id, threshold))
    return run.id


def _verdict(v: str) -> Outcome:
    if v == "NA":
        return Outcome(status="skipped", details={"verdict": "NA"}, rationale="cannot tell")
    return Outcome.scored(1.0 if v == "PASS" else 0.0, {}, details={"verdict": v}, rationale=f"said {v}")


HUMAN = ["PASS", "PASS", "FAIL", "PASS", "FAIL", "PASS", "PASS", "FAIL", "PASS", "PASS"] * 3
JUDGE = ["PASS", "FAIL", "FAIL", "PASS", "PASS", "PASS", "PASS", "FAIL", "PASS", "FAIL"] * 3


def test_binary_agreement_excludes_na_and_errors_by_reason(lib: Library) -> None:
    outcomes = {i: _verdict(JUDGE[i]) for i in range(N)}
    outcomes[0] = _verdict("NA")
    outcomes[1] = Outcome.failure("endpoint down")
    outcomes[2] = Outcome.invalid("not a number", raw="x")
    del outcomes[3]  # never graded
    run = _run(lib, outcomes)
    labels = [LabelInput(sample_id=f"s{i}", verdict=HUMAN[i]) for i in range(N)]
    labels[4] = LabelInput(sample_id="s4", verdict="NA")
    del labels[29]  # graded, unlabelled
    lib.labels.put_many("d", labels)
    report = agreement(lib, run)
    assert report["excluded"] == {"judge_na": 1, "error": 1, "invalid": 1, "not_graded": 1, "human_na": 1,
                                  "unlabelled": 1}
    kept = [i for i in range(5, 29)]
    assert report["n"] == len(kept) == 24
    human = [HUMAN[i] for i in kept]
    judge = [JUDGE[i] for i in kept]
    assert report["cohen_kappa"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-6)
    assert report["accuracy"] == pytest.approx(sum(h == j for h, j in zip(human, judge, strict=True)) / 24)
    assert report["kappa_ci"][0] <= report["cohen_kappa"] <= report["kappa_ci"][1]
    c = report["confusion"]
    assert c["PASS"]["FAIL"] == sum(h == "PASS" and j == "FAIL" for h, j in zip(human, judge, strict=True))
    assert sum(c[h][j] for h in c for j in c[h]) == 24
    assert report["base_rate"] == pytest.approx(human.count("PASS") / 24)
    assert {d["sample_id"] for d in report["disagreements"]} == {
        f"s{i}" for i in kept if HUMAN[i] != JUDGE[i]}
    first = report["disagreements"][0]
    assert {"sample_id", "human", "judge", "rationale"} <= set(first) and first["rationale"].startswith("said")
    precision = report["per_class"]["PASS"]["precision"]
    assert precision == pytest.approx(c["PASS"]["PASS"] / (c["PASS"]["PASS"] + c["FAIL"]["PASS"]))


def test_one_class_labels_leave_kappa_undefined_and_warn_about_the_base_rate(lib: Library) -> None:
    run = _run(lib, {i: _verdict("PASS") for i in range(N)})
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS") for i in range(N)])
    report = agreement(lib, run)
    assert report["accuracy"] == 1.0
    assert report["cohen_kappa"] is None and report["kappa_ci"] is None
    assert "undefined" in report["undefined"]["cohen_kappa"]
    assert report["warnings"] and "majority" in report["warnings"][0]


def test_a_scored_grader_uses_the_run_threshold_and_the_sweep_finds_the_best(lib: Library) -> None:
    scores = [0.1 * (i % 10) for i in range(N)]
    run = _run(lib, {i: Outcome.scored(s, {}) for i, s in enumerate(scores)}, threshold=0.5)
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS" if s >= 0.65 else "FAIL")
                              for i, s in enumerate(scores)])
    report = agreement(lib, run)
    judge = ["PASS" if s >= 0.5 else "FAIL" for s in scores]
    human = ["PASS" if s >= 0.65 else "FAIL" for s in scores]
    assert report["cohen_kappa"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-6)
    assert report["cohen_kappa"] < 1.0 and report["best_threshold"] == pytest.approx(0.7)
    best = next(s for s in report["threshold_sweep"] if s["threshold"] == report["best_threshold"])
    assert best["kappa"] == pytest.approx(1.0)


def test_score_labels_map_the_judge_score_back_onto_the_scale(lib: Library) -> None:
    human = [1, 2, 2, 3, 3, 3, 4, 4, 5, 5] * 3
    judge_raw = [1, 2, 3, 3, 3, 2, 4, 5, 5, 4] * 3
    run = _run(lib, {i: Outcome.scored((j - 1) / 4, {}) for i, j in enumerate(judge_raw)}, grader="r")
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", score=h) for i, h in enumerate(human)], key="q")
    report = agreement(lib, run, "q")
    assert report["mode"] == "scores" and report["n"] == N and report["scale"] == [1.0, 5.0]
    assert "1 + s * (5 - 1)" in report["scale_mapping"]
    assert report["mae"] == pytest.approx(sum(abs(a - b) for a, b in zip(human, judge_raw, strict=True)) / N)
    assert report["quadratic_kappa"] == pytest.approx(
        cohen_kappa_score(human, judge_raw, labels=[1, 2, 3, 4, 5], weights="quadratic"), abs=1e-6)
    for name in ("spearman", "kendall", "pearson"):
        assert -1 <= report[name] <= 1 and len(report[f"{name}_ci"]) == 2
    assert {d["sample_id"] for d in report["disagreements"]} == {
        f"s{i}" for i in range(N) if human[i] != judge_raw[i]}


def test_a_logprob_weighted_score_is_not_the_same_integer_scale(lib: Library) -> None:
    run = _run(lib, {i: Outcome.scored(0.1 + 0.02 * i, {}) for i in range(N)}, grader="r")
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", score=1 + i % 5) for i in range(N)], key="q")
    report = agreement(lib, run, "q")
    assert report["quadratic_kappa"] is None and "integers" in report["undefined"]["quadratic_kappa"]
    assert report["mae"] is not None


def test_compare_counts_flips_and_mcnemar_on_common_samples(lib: Library) -> None:
    a_scores = [1.0 if i % 2 else 0.0 for i in range(N)]
    b_scores = list(a_scores)
    for i in (0, 2, 4, 6, 8, 10):  # fail in A, pass in B
        b_scores[i] = 1.0
    b_scores[1] = 0.0  # pass in A, fail in B
    outcomes_a = {i: Outcome.scored(s, {}, rationale=f"A{i}") for i, s in enumerate(a_scores)}
    outcomes_b = {i: Outcome.scored(s, {}, rationale=f"B{i}") for i, s in enumerate(b_scores)}
    outcomes_b[29] = Outcome.failure("timeout")
    run_a, run_b = _run(lib, outcomes_a), _run(lib, outcomes_b)
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS" if b_scores[i] else "FAIL")
                              for i in range(N)])
    report = compare(lib, run_a, run_b)
    assert report["n_common"] == 29 and report["excluded"] == {"b_error": 1}
    a, b = a_scores[:29], b_scores[:29]
    assert report["mean_a"] == pytest.approx(sum(a) / 29) and report["mean_b"] == pytest.approx(sum(b) / 29)
    assert report["mean_delta"] == pytest.approx(sum(b) / 29 - sum(a) / 29, abs=1e-6)
    low, high = report["mean_delta_ci"]
    assert low <= report["mean_delta"] <= high
    assert (report["wins"], report["losses"], report["ties"]) == (6, 1, 22)
    assert {f["sample_id"] for f in report["flips"]} == {"s0", "s1", "s2", "s4", "s6", "s8", "s10"}
    flip = next(f for f in report["flips"] if f["sample_id"] == "s1")
    assert flip["a"]["rationale"] == "A1" and flip["b"]["rationale"] == "B1"
    assert report["mcnemar_p"] == pytest.approx(2 * (1 + 7) / 2 ** 7)
    side = report["labels"]
    assert side["n"] == 29 and side["kappa_b"] == pytest.approx(1.0) and side["kappa_a"] < side["kappa_b"]
    assert side["kappa_delta"] > 0 and "raises κ" in side["sentence"]
    assert not math.isnan(side["kappa_delta_ci"][0])


def test_compare_refuses_runs_on_different_datasets(lib: Library) -> None:
    run_a = _run(lib, {0: Outcome.scored(1.0, {})})
    other = start_run(lib, "g", "other")
    with pytest.raises(Conflict, match="same dataset"):
        compare(lib, run_a, other.id)


def test_the_sweep_keeps_a_judges_own_verdict_without_a_score(lib: Library) -> None:
    """A call with no score but its own PASS is a PASS at every threshold (NA is not zero: read as
    0.0, it was a FAIL at each, and no threshold reached the agreement the judge has)."""
    scores = [0.1 * (i % 10) for i in range(N)]
    outcomes = {i: Outcome.scored(s, {}) for i, s in enumerate(scores)}
    verdicts_only = range(0, N, 3)
    for i in verdicts_only:
        outcomes[i] = Outcome(status="ok", score=None, details={"verdict": "PASS"}, rationale="said PASS")
    run = _run(lib, outcomes)
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS" if i in verdicts_only or s >= 0.65
                                         else "FAIL") for i, s in enumerate(scores)])
    report = agreement(lib, run)
    assert report["n"] == N and report["best_threshold"] == pytest.approx(0.7)
    best = next(s for s in report["threshold_sweep"] if s["threshold"] == report["best_threshold"])
    assert best["kappa"] == pytest.approx(1.0) and best["accuracy"] == pytest.approx(1.0)


def test_a_disagreement_without_a_score_has_no_distance_to_the_threshold(lib: Library) -> None:
    """Its severity (how far the score is from the threshold) is undefined, not |0.0 - threshold|,
    and it leads the list: the judge gave its verdict outright."""
    outcomes = {i: Outcome.scored(0.9 if i % 2 else 0.1, {}) for i in range(N)}
    outcomes[7] = Outcome(status="ok", score=None, details={"verdict": "FAIL"}, rationale="said FAIL")
    run = _run(lib, outcomes)
    lib.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS") for i in range(N)])
    found = agreement(lib, run)["disagreements"]
    assert found[0]["sample_id"] == "s7" and found[0]["severity"] is None and found[0]["judge_score"] is None
    assert {d["severity"] for d in found[1:]} == {0.4}
