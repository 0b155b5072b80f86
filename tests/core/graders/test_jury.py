"""A jury of three scripted judges with known verdicts: the exact majority, the exact Fleiss κ
(computed here from its definition, independently of ``studio.core.stats``), Krippendorff's α from
the ``krippendorff`` package, a failing juror marked on the sample, and the quorum rule."""

from __future__ import annotations

import json
from collections.abc import Iterator

import krippendorff
import numpy as np
import pytest
from judge_helpers import add_endpoint, qa

from studio.core.demo.fake_script import Rule
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.preflight import EndpointUnreachable
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import parse_grader
from studio.core.store import Library

# juror -> verdict per sample (s0..s5), chosen so the jurors agree only in part
VERDICTS = {
    "alpha": ["PASS", "PASS", "FAIL", "PASS", "FAIL", "PASS"],
    "beta": ["PASS", "FAIL", "FAIL", "PASS", "PASS", "FAIL"],
    "gamma": ["FAIL", "PASS", "FAIL", "PASS", "FAIL", "FAIL"],
}


def rules(verdicts: list[str]) -> list[Rule]:
    return [Rule(pattern=f"question-{i}\\b", reply=json.dumps({"reasoning": "scripted", "verdict": v}))
            for i, v in enumerate(verdicts)]


def fleiss_by_hand(rows: list[list[str]]) -> float:
    """Fleiss (1971): P_i = (Σ n_ij² - n) / (n(n-1)); P_e = Σ p_j²; κ = (P̄ - P_e) / (1 - P_e)."""
    n = len(rows[0])
    categories = sorted({v for r in rows for v in r})
    p_i = [(sum(r.count(c) ** 2 for c in categories) - n) / (n * (n - 1)) for r in rows]
    p_j = [sum(r.count(c) for r in rows) / (len(rows) * n) for c in categories]
    p_bar, p_e = sum(p_i) / len(rows), sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


@pytest.fixture
def jury_library(library: Library) -> Iterator[Library]:
    servers = [FakeJudgeServer(rules=rules(v)).start() for v in VERDICTS.values()]
    for name, server in zip(VERDICTS, servers, strict=True):
        add_endpoint(library, server, name=name, max_retries=0)
    samples = [qa(f"s{i}", f"question-{i}: what is {i} + {i}?", str(2 * i), str(2 * i)) for i in range(6)]
    library.datasets.create("sums", samples, format="adaptive", source="test")
    yield library
    for server in servers:
        server.stop()


def jury(aggregation: str = "majority", endpoints: tuple[str, ...] = tuple(VERDICTS), **extra: object) -> object:
    return parse_grader({"kind": "jury", "key": "panel", "aggregation": aggregation, **extra, "jurors": [
        {"name": name, "grader": {"kind": "binary_judge", "key": f"j-{name}", "endpoint": endpoint,
                                  "criteria": "The answer is correct."}}
        for name, endpoint in zip(VERDICTS, endpoints, strict=True)]})


def test_majority_and_fleiss_kappa_are_exact(jury_library: Library) -> None:
    jury_library.graders.create(jury())
    info = run_grader(jury_library, "panel", "sums")
    results = jury_library.runs.results(info.id)
    rows = [[VERDICTS[name][i] for name in VERDICTS] for i in range(6)]
    majority = [1.0 if r.count("PASS") >= 2 else 0.0 for r in rows]
    assert [r["score"] for r in results] == majority == [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    for result, row in zip(results, rows, strict=True):
        jurors = result["details"]["jury"]["jurors"]
        assert [j["verdict"] for j in jurors] == row
        assert [j["endpoint"] for j in jurors] == list(VERDICTS)
    panel = info.aggregates["jury"]
    expected = fleiss_by_hand(rows)
    assert panel["fleiss_kappa"] == pytest.approx(expected, abs=1e-12)
    assert panel["fleiss_kappa_n"] == 6
    low, high = panel["fleiss_kappa_ci"]
    assert low <= expected <= high
    scores = np.array([[1.0 if v == "PASS" else 0.0 for v in VERDICTS[name]] for name in VERDICTS])
    alpha = krippendorff.alpha(reliability_data=scores, level_of_measurement="interval")
    assert panel["krippendorff_alpha"] == pytest.approx(alpha, abs=1e-9)
    assert {n: p["answered"] for n, p in panel["per_juror"].items()} == dict.fromkeys(VERDICTS, 6)
    assert all(p["prompt_tokens"] > 0 for p in panel["per_juror"].values())


def test_mean_min_and_weighted(jury_library: Library) -> None:
    jury_library.graders.create(jury("mean"))
    mean = [r["score"] for r in jury_library.runs.results(run_grader(jury_library, "panel", "sums").id)]
    per_sample = [[1.0 if VERDICTS[n][i] == "PASS" else 0.0 for n in VERDICTS] for i in range(6)]
    assert mean == pytest.approx([sum(s) / 3 for s in per_sample])
    jury_library.graders.save(jury("min"))
    low = [r["score"] for r in jury_library.runs.results(run_grader(jury_library, "panel", "sums").id)]
    assert low == [min(s) for s in per_sample]


def test_a_failing_juror_is_marked_and_the_quorum_decides(jury_library: Library) -> None:
    # gamma points at an endpoint where nothing listens: two of three still answer (quorum 2)
    add_endpoint(jury_library, FakeJudgeServer(), name="down", base_url="http://127.0.0.1:9/v1", max_retries=0,
                 timeout=0.5)
    jury_library.graders.create(jury(endpoints=("alpha", "beta", "down")))
    info = run_grader(jury_library, "panel", "sums", RunOptions(keep_going=True))
    results = jury_library.runs.results(info.id)
    assert {r["status"] for r in results} == {"ok"}
    for i, result in enumerate(results):
        jurors = result["details"]["jury"]["jurors"]
        assert jurors[2]["status"] == "error" and jurors[2]["error"]
        both = [VERDICTS["alpha"][i], VERDICTS["beta"][i]]
        assert result["score"] == (1.0 if both == ["PASS", "PASS"] else 0.0 if both == ["FAIL", "FAIL"] else 0.5)
    assert info.aggregates["jury"]["per_juror"]["gamma"]["failed"] == 6
    # with a quorum of 3 the run could not be done: refused before it exists, with the reason
    jury_library.graders.save(jury(endpoints=("alpha", "beta", "down"), quorum=3))
    runs_before = len(jury_library.runs.list())
    with pytest.raises(EndpointUnreachable, match="fewer than the quorum of 3 .unreachable: gamma."):
        run_grader(jury_library, "panel", "sums", RunOptions(keep_going=True))
    assert len(jury_library.runs.list()) == runs_before


def test_a_juror_failing_mid_run_fails_the_samples_below_the_quorum(jury_library: Library) -> None:
    """Reachable (the preflight passes), failing on every call (a path the server does not serve):
    each sample says fewer than the quorum answered."""
    server = FakeJudgeServer().start()
    try:
        add_endpoint(jury_library, server, name="broken", base_url=server.base_url + "/no-such-api",
                     max_retries=0, timeout=0.5)
        jury_library.graders.create(jury(endpoints=("alpha", "beta", "broken"), quorum=3))
        info = run_grader(jury_library, "panel", "sums", RunOptions(keep_going=True))
    finally:
        server.stop()
    results = jury_library.runs.results(info.id)
    assert {r["status"] for r in results} == {"error"}
    assert "fewer than the quorum of 3" in results[0]["error"]


def test_render_shows_every_jurors_prompt() -> None:
    from studio.core.judges.render import render_prompt

    rendered = render_prompt(jury(), qa("s0", "question-0: what is 0 + 0?", "0", "0"))  # type: ignore[arg-type]
    assert [c.label for c in rendered.calls] == ["alpha: verdict", "beta: verdict", "gamma: verdict"]
    assert all("question-0" in c.messages[-1].content for c in rendered.calls)
