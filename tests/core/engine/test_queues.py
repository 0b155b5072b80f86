"""Review queues (issue 48) on SQLite and a real PostgreSQL: each rule's choice, blind items,
reviewer agreement equal to scikit-learn's and the ``krippendorff`` package's, adjudicated numbers
labelled as such, and few-shots and a curated dataset made from settled samples, with provenance."""

from __future__ import annotations

import socket
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from studio.core.engine.queues import (
    QueueRule,
    adjudicated,
    adjudicated_lines,
    create_queue,
    dataset_from_queue,
    queue_agreement,
    reviewer_agreement,
    shots_from_queue,
)
from studio.core.engine.runner import RunOptions, run_grader, start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BinaryJudge, BuiltinGrader, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Conflict, Library, NotFound
from studio.core.store.queues import NotAllowed, QueueLabel


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


N = 12


@pytest.fixture
def lib(library: Library, request: pytest.FixtureRequest) -> Library:
    listener = socket.create_server(("127.0.0.1", 0))  # a run's preflight connects; nothing is asked
    request.addfinalizer(listener.close)
    port = listener.getsockname()[1]
    library.endpoints.save(EndpointConfig(name="judge", base_url=f"http://127.0.0.1:{port}/v1", model="m"))
    library.graders.create(BinaryJudge(key="j", criteria="Is the answer correct?", endpoint="judge"))
    library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"q{i}")],
                                         completion=f"a{i}") for i in range(N)])
    library.datasets.create("other", [Sample(id="s0", completion="x")])
    return library


def _run(lib: Library, verdicts: list[str | float], dataset: str = "d") -> int:
    run = start_run(lib, "j", dataset, RunOptions())
    rows = []
    for i, v in enumerate(verdicts):
        if isinstance(v, float):
            outcome = Outcome.scored(v, {}, rationale=f"score {v}")
        elif v == "ERR":
            outcome = Outcome.failure("boom")
        else:
            outcome = Outcome.scored(1.0 if v == "PASS" else 0.0, {}, details={"verdict": v}, rationale=f"said {v}")
        rows.append((i, f"s{i}", outcome))
    lib.runs.write_results(run.id, rows)
    lib.runs.set_status(run.id, "completed", aggregates=run_aggregates(lib, run.id))
    return run.id


A = ["PASS", "FAIL", "PASS", "PASS", "FAIL", "PASS", "FAIL", "PASS", "PASS", "ERR", "PASS", "FAIL"]
B = ["PASS", "PASS", "PASS", "FAIL", "FAIL", "PASS", "FAIL", "FAIL", "PASS", "PASS", "PASS", "FAIL"]


def test_each_rule_chooses_its_samples(lib: Library) -> None:
    a, b = _run(lib, list(A)), _run(lib, list(B))
    q = create_queue(lib, "dis", [a, b], QueueRule(rule="disagreements"))
    assert [sid for sid, _ in lib.queues.samples("dis")] == ["s1", "s3", "s7"]
    assert lib.queues.samples("dis")[0][1] == f"run {a} FAIL, run {b} PASS"
    assert q.size == 3 and q.dataset == "d" and q.runs == [a, b]
    create_queue(lib, "failed", [a], QueueRule(rule="failed"))
    assert [sid for sid, _ in lib.queues.samples("failed")] == ["s1", "s4", "s6", "s11"]
    scored = _run(lib, [0.1, 0.45, 0.5, 0.62, 0.9, 0.55, 0.3, 0.8, 0.41, 0.7, 0.2, 0.59])
    create_queue(lib, "low", [scored], QueueRule(rule="low_confidence", margin=0.1))
    assert [sid for sid, _ in lib.queues.samples("low")] == ["s1", "s2", "s5", "s8", "s11"]
    first = create_queue(lib, "r1", [a], QueueRule(rule="random", n=5, seed=7))
    create_queue(lib, "r2", [a], QueueRule(rule="random", n=5, seed=7))
    other = create_queue(lib, "r3", [a], QueueRule(rule="random", n=5, seed=8))
    assert first.size == 5 and lib.queues.samples("r1") == lib.queues.samples("r2")
    assert lib.queues.samples("r1") != lib.queues.samples("r3") and other.size == 5
    assert first.rule == {"rule": "random", "n": 5, "seed": 7, "margin": 0.1}


def test_disagreements_between_two_graders_of_one_suite_run(lib: Library) -> None:
    """The rule's second form: one suite run, two of its graders; a sample both graded and judged
    differently is chosen, whatever the suite's overall score says."""
    answers = ["Paris", "Paris, surely", "Lyon", "It is Paris", "Paris", "Marseille"]
    lib.datasets.create("geo", [Sample(id=f"g{i}", messages=[Turn(role="user", content="Capital of France?")],
                                       completion=a, expected="Paris") for i, a in enumerate(answers)])
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.graders.create(BuiltinGrader(key="contains", function="contains"))
    lib.suites.create(SuiteDefinition(key="geo-suite", overall="mean", graders=[
        SuiteMember(grader="exact"), SuiteMember(grader="contains")]))
    run = run_grader(lib, "geo-suite", "geo")
    assert run.status == "completed"
    q = create_queue(lib, "graders", [run.id], QueueRule(rule="disagreements", graders=["exact", "contains"]))
    assert lib.queues.samples("graders") == [("g1", "exact FAIL, contains PASS"), ("g3", "exact FAIL, contains PASS")]
    assert q.rule == {"rule": "disagreements", "seed": 0, "margin": 0.1, "graders": ["exact", "contains"]}
    with pytest.raises(Conflict, match="one suite run and two grader keys"):
        create_queue(lib, "x", [run.id], QueueRule(rule="disagreements", graders=["exact"]))
    with pytest.raises(Conflict, match="one suite run and two grader keys"):
        create_queue(lib, "x", [run.id, run.id], QueueRule(rule="disagreements", graders=["exact", "contains"]))


def test_bad_input_is_a_sentence(lib: Library) -> None:
    a = _run(lib, list(A))
    elsewhere = _run(lib, ["PASS"], dataset="other")
    with pytest.raises(Conflict, match="must be of one dataset"):
        create_queue(lib, "x", [a, elsewhere], QueueRule(rule="failed"))
    with pytest.raises(Conflict, match="compare two runs"):
        create_queue(lib, "x", [a], QueueRule(rule="disagreements"))
    with pytest.raises(Conflict, match="--n N"):
        create_queue(lib, "x", [a], QueueRule(rule="random"))
    with pytest.raises(Conflict, match="chose no sample"):
        create_queue(lib, "x", [_run(lib, ["PASS"] * N)], QueueRule(rule="failed"))
    create_queue(lib, "x", [a], QueueRule(rule="failed"))
    with pytest.raises(Conflict, match="already exists"):
        create_queue(lib, "x", [a], QueueRule(rule="failed"))
    with pytest.raises(NotFound, match="no review queue named 'y'"):
        lib.queues.get("y")
    with pytest.raises(NotFound, match="has no sample 's0'"):
        lib.queues.put_label("x", "s0", "PASS", reviewer="ann")
    with pytest.raises(Conflict, match="PASS, FAIL or NA"):
        lib.queues.put_label("x", "s1", "MAYBE", reviewer="ann")


def test_a_reviewer_sees_the_judge_and_the_others_only_after_labelling(lib: Library) -> None:
    a = _run(lib, list(A))
    create_queue(lib, "q", [a], QueueRule(rule="failed"), labels_wanted=2, assignees=["ann", "bob"],
                 leads=["lea"])
    before = lib.queues.item("q", "s1", "bob")
    assert not before.revealed and before.judged is None and before.others is None and before.settled is None
    lib.queues.put_label("q", "s1", "PASS", "fine", reviewer="ann")
    still = lib.queues.item("q", "s1", "bob")
    assert not still.revealed and still.others is None and still.judged is None  # ann's label stays hidden
    lib.queues.put_label("q", "s1", "FAIL", "wrong", reviewer="bob")
    after = lib.queues.item("q", "s1", "bob")
    assert after.revealed and after.mine is not None and after.mine.verdict == "FAIL"
    assert [(o.reviewer, o.verdict, o.note) for o in after.others or []] == [("ann", "PASS", "fine")]
    assert [(j.run_id, j.rationale) for j in after.judged or []] == [(a, "said FAIL")]
    assert lib.queues.item("q", "s4", "lea").revealed  # a lead settles with everything in view
    with pytest.raises(NotAllowed, match="carl is not a reviewer of queue 'q'"):
        lib.queues.put_label("q", "s1", "PASS", reviewer="carl")
    with pytest.raises(NotAllowed, match="only a lead"):
        lib.queues.settle("q", "s1", "PASS", author="ann")
    progress = {p.reviewer: (p.labelled, p.total) for p in lib.queues.progress("q")}
    assert progress == {"ann": (1, 4), "bob": (1, 4)}
    assert lib.queues.next_for("q", "ann") == "s4"
    # a correction is a new version; the old one stays in the history
    lib.queues.put_label("q", "s1", "FAIL", "on second look", reviewer="ann")
    assert [(h.reviewer, h.version, h.verdict) for h in lib.queues.history("q", "s1")] == [
        ("ann", 1, "PASS"), ("bob", 1, "FAIL"), ("ann", 2, "FAIL")]


def _labels(table: dict[str, dict[str, str]]) -> dict[str, dict[str, QueueLabel]]:
    return {sid: {who: QueueLabel(sample_id=sid, reviewer=who, version=1, verdict=v) for who, v in per.items()}
            for sid, per in table.items()}


def test_reviewer_agreement_equals_scikit_learn_and_krippendorff() -> None:
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 2, 40)
    people = {who: [("PASS" if (t if rng.random() > noise else 1 - t) else "FAIL") for t in truth]
              for who, noise in (("ann", 0.1), ("bob", 0.25), ("cy", 0.4))}
    table = {f"s{i}": {who: people[who][i] for who in people} for i in range(40)}
    for i in range(0, 40, 7):  # cy skipped some: α takes missing values, Fleiss' κ does not
        del table[f"s{i}"]["cy"]
    report = reviewer_agreement(_labels(table))
    for pair in report["pairs"]:
        both = [s for s, per in table.items() if pair["a"] in per and pair["b"] in per]
        expected = cohen_kappa_score([table[s][pair["a"]] for s in both], [table[s][pair["b"]] for s in both])
        assert pair["kappa"]["value"] == pytest.approx(expected, abs=1e-12)
        low, high = pair["kappa"]["ci"]
        assert low <= expected <= high
    reliability = [[{"PASS": 1, "FAIL": 0}[per[who]] if who in per else np.nan for per in table.values()]
                   for who in ("ann", "bob", "cy")]
    expected_alpha = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert report["krippendorff_alpha"]["value"] == pytest.approx(expected_alpha, abs=1e-12)
    assert report["fleiss_kappa"]["value"] is None and "same number" in report["fleiss_kappa"]["reason"]
    full = {s: per for s, per in table.items() if len(per) == 3}
    assert reviewer_agreement(_labels(full))["fleiss_kappa"]["value"] is not None


def test_agreement_judge_against_majority_and_disagreements(lib: Library) -> None:
    a = _run(lib, list(A))
    create_queue(lib, "q", [a], QueueRule(rule="random", n=N, seed=0), labels_wanted=2)
    for i in range(N):
        truth = "PASS" if i % 3 else "FAIL"
        lib.queues.put_label("q", f"s{i}", truth, reviewer="ann")
        lib.queues.put_label("q", f"s{i}", truth if i != 5 else "FAIL", reviewer="bob")
    report = queue_agreement(lib, "q")
    judge = report["judges"][0]
    # s5 is a tie (ann PASS, bob FAIL) and s9 the judge's error: both left out, counted by reason
    assert judge["excluded"] == {"tie": 1, "error": 1} and judge["n"] == N - 2
    human = ["PASS" if i % 3 else "FAIL" for i in range(N) if i not in (5, 9)]
    said = [v for i, v in enumerate(A) if i not in (5, 9)]
    assert judge["cohen_kappa"] == pytest.approx(cohen_kappa_score(human, said), abs=1e-6)
    assert judge["accuracy"] == pytest.approx(sum(h == s for h, s in zip(human, said, strict=True)) / len(human))
    assert sum(judge["confusion"]["PASS"].values()) == human.count("PASS")
    assert set(judge["per_class"]["PASS"]) >= {"precision", "recall"}
    split = [d for d in report["disagreements"] if d["why"] == "reviewers disagree"]
    assert [d["sample_id"] for d in split] == ["s5"]
    # settling the tie makes it count, with the lead's verdict
    lib.queues.settle("q", "s5", "PASS", "the answer is right")
    assert queue_agreement(lib, "q")["judges"][0]["excluded"] == {"error": 1}


def test_adjudicated_numbers_say_so_and_keep_the_judges_verdict(lib: Library) -> None:
    a = _run(lib, list(A))
    create_queue(lib, "q", [a], QueueRule(rule="failed"))
    lib.queues.settle("q", "s1", "PASS", "the judge was too strict")
    lib.queues.settle("q", "s4", "NA", "no answer possible")
    report = adjudicated(lib, a)
    assert (report["judged"]["pass"], report["judged"]["fail"]) == (7, 4)
    assert (report["adjudicated"]["pass"], report["adjudicated"]["fail"]) == (8, 2)
    assert report["settled"] == 2 and report["changed"] == 2 and report["queues"] == ["q"]
    lines = adjudicated_lines(report)
    assert lines[0].startswith("pass rate as judged: 63.6%") and lines[1].startswith("pass rate as adjudicated: 80.0%")
    assert lib.runs.results(a)[1]["rationale"] == "said FAIL"  # the stored verdict is untouched
    lib.queues.settle("q", "s1", None)  # a withdrawn settlement: the judge's verdict counts again
    assert adjudicated(lib, a)["adjudicated"]["pass"] == 7


def test_settled_samples_become_few_shots_and_a_curated_dataset(lib: Library) -> None:
    a = _run(lib, list(A))
    create_queue(lib, "q", [a], QueueRule(rule="failed"))
    lib.queues.put_label("q", "s1", "PASS", "right, just terse", reviewer="ann")
    lib.queues.settle("q", "s1", "PASS")
    lib.queues.settle("q", "s4", "FAIL", "wrong year")
    with pytest.raises(Conflict, match="not settled in queue 'q': s6"):
        shots_from_queue(lib, "q", "j", ["s6"])
    entry = shots_from_queue(lib, "q", "j")  # the settled samples the judge got wrong: s1 only
    assert entry["samples"] == ["s1"] and entry["version"] == 2
    judge = lib.graders.version("j", 2).definition
    shot = judge.examples[-1]  # type: ignore[attr-defined]
    assert (shot.verdict, shot.reasoning, shot.completion) == ("PASS", "right, just terse", "a1")
    assert shot.messages[0].content == "q1"
    assert "review queue 'q'" in lib.graders.versions("j")[-1].message
    made = dataset_from_queue(lib, "q", "d-curated")
    assert made["samples"] == ["s1", "s4"]
    record = lib.datasets.get("d-curated")
    assert record.provenance == {"kind": "curated", "source_dataset": "d", "queue": "q", "runs": [a],
                                 "samples": ["s1", "s4"]}
    current = lib.labels.current("d-curated")
    assert {sid: (lab.verdict, lab.note) for sid, lab in current.items()} == {
        "s1": ("PASS", ""), "s4": ("FAIL", "wrong year")}
    assert [d["kind"] for d in lib.queues.get("q").derived] == ["judge_version", "dataset"]
    # the new judge's run on the queue is measured beside the old one's, without the learned sample
    b = _run(lib, list(B))
    lib.queues.add_run("q", b)
    report = queue_agreement(lib, "q")
    assert [j["run_id"] for j in report["judges"]] == [a, b]
    assert "1 used as few-shot examples left out" in report["measured_on"]
    change = report["changes"][0]
    # s4 only (s1 taught the new version): one class on one sample, κ undefined on both sides
    assert (change["run_a"], change["run_b"]) == (a, b) and change["n"] == 1
    assert "the change is undefined" in change["sentence"]


def test_assign_adds_and_removes_reviewers_and_leads(lib: Library) -> None:
    a = _run(lib, list(A))
    create_queue(lib, "q", [a], QueueRule(rule="failed"), assignees=["ann"], leads=["lea"])
    with pytest.raises(NotAllowed, match="bob is not a reviewer"):
        lib.queues.put_label("q", "s1", "PASS", reviewer="bob")
    assert lib.queues.assign("q", ["bob", " "]).assignees == ["ann", "bob"]
    assert lib.queues.put_label("q", "s1", "PASS", reviewer="bob") is not None
    assert lib.queues.assign("q", ["ann"], remove=True).assignees == ["bob"]
    assert lib.queues.assign("q", ["ann"], leads=True).leads == ["ann", "lea"]
    assert lib.queues.settle("q", "s1", "PASS", author="ann") is not None
    with pytest.raises(Conflict, match="needs at least one lead"):
        lib.queues.assign("q", ["ann", "lea"], leads=True, remove=True)
    with pytest.raises(Conflict, match="name at least one user"):
        lib.queues.assign("q", [""])
    with pytest.raises(NotAllowed, match="only a lead of queue 'q'"):
        lib.queues.require_lead("q", "bob")
