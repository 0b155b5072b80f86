"""Bias probes against scripted judges that are biased on purpose, over real HTTP on 127.0.0.1.

Each server's bias is known, so each probe's numbers are known: the first-answer judge is never
consistent under a swap, the length judge passes padded answers, the reference-blind judge does
not move when the reference is swapped, and the unbiased judge flags nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.demo.fake_script import LONG_WORDS
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.probes import PADDING, ProbeError, padded, probe_judge
from studio.core.graders.text import normalize
from studio.core.models import parse_grader
from studio.core.store import Library
from studio.core.store.probe_reports import ProbeReportRepository

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid"),
            ("Peru", "Lima"), ("Kenya", "Nairobi"), ("Egypt", "Cairo"), ("Chile", "Santiago"),
            ("Norway", "Oslo"), ("Greece", "Athens")]
WRONG = "I think it is Springfield, but I may be wrong."
CORRECT = 5  # the first 5 samples answer correctly, the last 5 do not


@pytest.fixture
def servers() -> Iterator[dict[str, FakeJudgeServer]]:
    started = {name: FakeJudgeServer(bias=None if name == "fair" else name).start()
               for name in ("fair", "first", "length", "no-reference")}
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def probed(library: Library, servers: dict[str, FakeJudgeServer]) -> Library:
    for name, server in servers.items():
        add_endpoint(library, server, name=name)
    samples = []
    for i, (country, capital) in enumerate(CAPITALS):
        good, bad = f"The capital is {capital}.", WRONG
        completion = good if i < CORRECT else bad
        # answer A is the right one on even rows, B on odd rows: the better answer moves around
        a, b = (good, bad) if i % 2 == 0 else (bad, good)
        samples.append(qa(f"s{i}", f"What is the capital of {country}?", completion, capital,
                          metadata={"completion_a": a, "completion_b": b}))
    library.datasets.create("capitals", samples, format="adaptive", source="test")
    library.graders.create(parse_grader({"kind": "binary_judge", "key": "correct", "criteria": "correct"}))
    library.graders.create(parse_grader({"kind": "pairwise_judge", "key": "better"}))
    return library


def test_padding_adds_no_facts_and_is_long_enough() -> None:
    for paragraph in PADDING:
        assert len(paragraph.split()) >= LONG_WORDS
        for _, capital in CAPITALS:
            assert normalize(capital) not in normalize(paragraph)
    assert (padded("x", "Paris") or "").startswith("x\n\n")
    assert padded("x", "standard textbook") is not None  # the other paragraph is used
    assert padded("x", "question") is None  # every paragraph says it: the sample is left out


def test_unbiased_judge_flags_nothing(probed: Library) -> None:
    report = probe_judge(probed, "correct", "capitals", ["verbosity", "reference", "repeat"], endpoint="fair")
    probes = report["probes"]
    assert probes["verbosity"]["n"] == 10
    assert probes["verbosity"]["mean_shift"] == 0.0 and probes["verbosity"]["ci"] == [0.0, 0.0]
    assert probes["verbosity"]["flip_rate"] == 0.0 and probes["verbosity"]["flag"] is False
    # the 5 right answers fail against another sample's reference; the 5 wrong ones stay wrong
    assert probes["reference"]["mean_shift"] == pytest.approx(-0.5)
    assert probes["reference"]["flip_rate"] == pytest.approx(0.5)
    assert probes["reference"]["ci"][1] < 0 and probes["reference"]["flag"] is False
    assert probes["repeat"]["kappa"] == pytest.approx(1.0) and probes["repeat"]["sd"] == 0.0
    assert probes["repeat"]["flip_rate"] == 0.0 and probes["repeat"]["flag"] is False
    pairwise = probe_judge(probed, "better", "capitals", ["position", "verbosity", "repeat"],
                           endpoint="fair")["probes"]
    assert pairwise["repeat"]["kappa"] == pytest.approx(1.0)  # A and B verdicts, the same every time
    assert pairwise["position"]["position_consistency"] == 1.0
    assert pairwise["position"]["first_position_rate"] == 0.5 and pairwise["position"]["flag"] is False
    assert pairwise["verbosity"]["flag"] is False


def test_first_answer_judge_is_never_consistent_and_flagged(probed: Library) -> None:
    probes = probe_judge(probed, "better", "capitals", ["position", "repeat"], endpoint="first")["probes"]
    # every repeat is "inconsistent" again: steady, so nothing flips, and κ of one class is undefined
    assert probes["repeat"]["flip_rate"] == 0.0 and probes["repeat"]["kappa"] is None
    assert "same class" in probes["repeat"]["kappa_reason"]
    position = probes["position"]
    assert position["n"] == 10
    assert position["position_consistency"] == 0.0
    assert position["position_consistency_ci"][1] < 0.5
    assert position["first_position_rate"] == 1.0 and position["first_position_rate_ci"][0] > 0.5
    assert position["flip_rate"] == 1.0
    assert position["flag"] is True


def test_length_judge_is_flagged_by_the_verbosity_probe(probed: Library) -> None:
    probes = probe_judge(probed, "correct", "capitals", ["verbosity"], endpoint="length")["probes"]
    # the five wrong answers pass once padded: +1 on 5 of 10 samples
    assert probes["verbosity"]["mean_shift"] == pytest.approx(0.5)
    assert probes["verbosity"]["flip_rate"] == pytest.approx(0.5)
    assert probes["verbosity"]["ci"][0] > 0 and probes["verbosity"]["flag"] is True


def test_reference_blind_judge_is_flagged_by_the_reference_probe(probed: Library) -> None:
    probes = probe_judge(probed, "correct", "capitals", ["reference"], endpoint="no-reference")["probes"]
    assert probes["reference"]["n"] == 10
    assert probes["reference"]["mean_shift"] == 0.0 and probes["reference"]["flip_rate"] == 0.0
    assert probes["reference"]["flag"] is True


def test_reports_are_kept_for_the_report_card(probed: Library) -> None:
    report = probe_judge(probed, "correct", "capitals", ["verbosity"], endpoint="fair", limit=4)
    assert report["samples"] == 4
    saved = ProbeReportRepository(probed.engine).latest("correct")
    assert saved is not None and saved.report["probes"] == report["probes"] and saved.dataset == "capitals"


def test_probes_refuse_what_cannot_apply(probed: Library) -> None:
    with pytest.raises(ProbeError, match="pairwise"):
        probe_judge(probed, "correct", "capitals", ["position"], endpoint="fair")
    with pytest.raises(ProbeError, match="unknown probe"):
        probe_judge(probed, "correct", "capitals", ["loudness"], endpoint="fair")
    probed.graders.create(parse_grader({"kind": "builtin", "key": "exact", "function": "exact_match"}))
    with pytest.raises(ProbeError, match="LLM judges"):
        probe_judge(probed, "exact", "capitals", ["verbosity"])


def test_a_sample_that_errors_is_left_out_and_counted(library: Library, fake_judge: FakeJudgeServer) -> None:
    add_endpoint(library, fake_judge, name="flaky", max_retries=0)
    samples = [qa(f"s{i}", f"What is the capital of {c}?", f"The capital is {cap}.", cap)
               for i, (c, cap) in enumerate(CAPITALS[:5])]
    samples.append(qa("broken", "What is the capital of Oz? [[fault:500]]", "Emerald City", "Emerald City"))
    library.datasets.create("flaky", samples)
    library.graders.create(parse_grader({"kind": "binary_judge", "key": "correct", "criteria": "correct"}))
    report = probe_judge(library, "correct", "flaky", ["verbosity", "repeat"], endpoint="flaky", repeats=2)
    assert report["probes"]["verbosity"]["n"] == 5 and report["probes"]["repeat"]["n"] == 5
    assert set(report["probes"]) == {"verbosity", "repeat"}
    assert report["errors"] == {"original": 1, "verbosity": 1, "repeat 1/2": 1, "repeat 2/2": 1}


@pytest.mark.parametrize("n", [3, 12, 35, 48])  # where the interval of 0 flips starts at 1e-17, not 0
def test_a_deterministic_judge_is_never_flagged_by_the_repeat_probe(n: int) -> None:
    from studio.core.engine.probes import MIN_FLIP_RATE, repeat_probe
    from studio.core.models import Outcome

    steady = [[Outcome.scored(float(i % 2), {}, details={"verdict": "PASS" if i % 2 else "FAIL"}) for i in range(n)]
              for _ in range(3)]
    report = repeat_probe(steady, 0.5)
    assert report["flip_rate"] == 0.0 and report["sd"] == 0.0 and report["kappa"] == pytest.approx(1.0)
    assert report["flip_rate_ci"][0] < 1e-9 and report["flag"] is False
    assert f"{MIN_FLIP_RATE:.0%}" in report["rule"]
    # a judge that flips on every other sample is flagged
    shaky = [steady[0], [Outcome.scored(1.0 - o.score, {}, details={"verdict": "FAIL" if o.score else "PASS"})
                         if i % 2 == 0 else o for i, o in enumerate(steady[1])], steady[2]]
    assert repeat_probe(shaky, 0.5)["flag"] is True
