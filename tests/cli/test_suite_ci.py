"""Suites in CI, end to end through real processes against the scripted judge: every report, verdict,
usage total, dry run and spend cap of a suite run is per grader (each read from that grader's own
results, never the overall rows), ``--fail-under SCORE`` is the suite's overall score (or, for a suite
with no overall rule, each grader's mean), and ``runs report`` of a suite says what ``run`` said."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.sections import load_run, section_rows
from studio.core.engine.usage import exact_decimal
from studio.core.engine.verdict import NO_OVERALL
from studio.core.models import BinaryJudge, BuiltinGrader, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository
from studio.core.store.run_graders import graders_with_results

# per judge: 6 pass, 3 fail, 2 NA, and (last) 1 the server always refuses; exact match: 6 pass, 6 fail
PASSING, FAILING, NA = 6, 3, 2
PRICES = {"fake": ("0.15", "0.60"), "dear": ("2.5", "10")}  # USD per million tokens, as typed


def completion(i: int) -> str:
    if i < PASSING:
        return "Paris"
    if i < PASSING + FAILING:
        return "Lyon"
    if i < PASSING + FAILING + NA:
        return "[[judge:NA]] Paris"
    return "[[fault:500]] Paris"


def prepare(db_path: Path, server: FakeJudgeServer, samples: list[Sample]) -> None:
    """Two priced endpoints (OpenAI tokenizer), two judges and an exact match; suite ``ci`` (overall
    mean, exact must be 1 to pass) and suite ``bare`` (no overall rule)."""
    with Library.open(db_path) as lib:
        for name, (price_in, price_out) in PRICES.items():
            EndpointRepository.of(lib).save(EndpointConfig(
                name=name, base_url=server.base_url, model="gpt-4o-mini", retry_backoff=0.01, max_retries=1,
                timeout=5.0, price_input=price_in, price_output=price_out, max_concurrency=2))
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="fake"))
        lib.graders.create(BinaryJudge(key="strict", criteria="The answer is correct and short.", endpoint="dear"))
        lib.datasets.create("qa", samples)
        lib.datasets.create("other", [Sample(id="x", messages=[Turn(role="user", content="hi")], completion="Paris",
                                             expected="Paris")])
        lib.suites.create(SuiteDefinition(key="ci", overall="mean", graders=[
            SuiteMember(grader="exact", threshold=1.0), SuiteMember(grader="judge"), SuiteMember(grader="strict")]))
        lib.suites.create(SuiteDefinition(key="bare", graders=[SuiteMember(grader="exact"),
                                                               SuiteMember(grader="judge")]))


@pytest.fixture
def suited(db_path: Path, fake_judge: FakeJudgeServer) -> FakeJudgeServer:
    prepare(db_path, fake_judge, [
        Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i})")],
               completion=completion(i), expected="Paris") for i in range(12)])
    return fake_judge


def runs_made(cli) -> int:  # type: ignore[no-untyped-def]
    return len(json.loads(cli("runs", "list", "--json").stdout))


def test_junit_markdown_github_and_json_per_grader(cli, suited: FakeJudgeServer, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                   db_path: Path) -> None:
    step_summary = tmp_path / "step-summary.md"
    junit, markdown = tmp_path / "junit.xml", tmp_path / "summary.md"
    done = cli("run", "ci", "qa", "--json", "--junit", str(junit), "--markdown", str(markdown), "--github",
               env={"GITHUB_STEP_SUMMARY": str(step_summary)})
    assert done.returncode == 1, done.stderr  # q11 errored for both judges
    out = json.loads(done.stdout)
    # run --json keeps issue 21's "graders" (key, version, aggregates, counts), plus usage and verdict
    assert [g["key"] for g in out["graders"]] == ["exact", "judge", "strict"]
    graders = {g["key"]: g for g in out["graders"]}
    assert all(g["version"] == 1 for g in graders.values())
    assert graders["exact"]["counts"] == {"ok": 12, "error": 0, "invalid": 0, "na": 0}
    assert graders["judge"]["counts"] == {"ok": PASSING + FAILING, "error": 1, "invalid": 0, "na": NA}
    assert graders["exact"]["aggregates"]["mean"] == 0.5 and graders["judge"]["aggregates"]["n"] == PASSING + FAILING
    assert set(out["usage"]["graders"]) == {"exact", "judge", "strict"}
    verdict = out["verdict"]
    assert verdict["outcome"] == "fail" and verdict["fail_under_applies_to"] == "overall"
    assert verdict["reasons"] == ["1 sample(s) errored or were invalid (by grader: judge 1, strict 1)"]
    assert [c["key"] for c in verdict["graders"]] == ["exact", "judge", "strict"]
    assert verdict["mean"] == out["overall"]["aggregates"]["mean"]  # the suite's own overall score

    # JUnit: one testsuite per grader, one testcase per sample, counted from that grader's rows
    suites = {s.name: s for s in JUnitXml.fromfile(str(junit))}
    assert list(suites) == ["exact v1", "judge v1", "strict v1"]
    assert (suites["exact v1"].tests, suites["exact v1"].failures, suites["exact v1"].errors,
            suites["exact v1"].skipped) == (12, 6, 0, 0)
    for key in ("judge v1", "strict v1"):
        suite = suites[key]
        assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (12, FAILING, 1, NA)
        cases = {case.name: case for case in suite}
        assert set(cases) == {f"q{i}" for i in range(12)} and cases["q0"].is_passed
        assert isinstance(cases["q6"].result[0], Failure) and "Scripted rule gave FAIL." in cases["q6"].result[0].message
        assert isinstance(cases["q9"].result[0], Skipped)
        assert isinstance(cases["q11"].result[0], Error) and "HTTP 500" in cases["q11"].result[0].message
    exact_cases = {case.name: case for case in suites["exact v1"]}
    failure = exact_cases["q11"].result[0]  # exact match does not fail on the judge's fault; its threshold is 1
    assert isinstance(failure, Failure) and "pass threshold 1" in failure.message

    # markdown: per grader mean (and interval), pass rate at its threshold, counts, five worst
    text = markdown.read_text()
    assert f"| exact v1 | {graders['exact']['aggregates']['mean']:.4f} (" in text
    # (the pass rate's 95% Wilson interval: 6 of 12 pass)
    assert "| exact v1 | 0.5000 (" in text and "50.0% (25.4% to 74.6%) (score >= 1) | 12 | 0 | 0 | 0 |" in text
    for key in ("judge", "strict"):
        agg = graders[key]["aggregates"]
        assert f"| {key} v1 | {agg['mean']:.4f} (" in text
        low, high = agg["pass_rate_ci"]
        assert (f"{agg['pass_rate']:.1%} ({low:.1%} to {high:.1%}) (score >= 0.5) | {PASSING + FAILING} | 0 | 1 | {NA} |"
                in text)
    overall = out["overall"]["aggregates"]
    assert f"| overall (mean) | {overall['mean']:.4f}" in text
    for key in ("exact", "judge", "strict"):
        section = text.split(f"### {key} v1: the 5 lowest scores")[1].split("###")[0]
        worst = re.findall(r"^\| (q\d+) \| ([0-9.]+) \| (.*) \|$", section, re.M)
        assert len(worst) == 5
        if key == "exact":
            assert [w[0] for w in worst] == ["q6", "q7", "q8", "q9", "q10"] and {w[1] for w in worst} == {"0.0000"}
        else:  # the three FAILs first, then the lowest passes
            assert [(w[0], w[1]) for w in worst[:3]] == [("q6", "0.0000"), ("q7", "0.0000"), ("q8", "0.0000")]
            assert worst[0][2] == "Scripted rule gave FAIL." and worst[3][1] == "1.0000"
    assert "**Verdict: FAIL**" in text
    assert step_summary.read_text() == text + "\n"

    # --github: a warning per errored result, titled by its grader
    annotations = [line for line in done.stderr.splitlines() if line.startswith("::")]
    assert sorted(annotations) == sorted(line for line in annotations if line.startswith("::warning"))
    assert [a.split("::")[1] for a in annotations] == ["warning title=judge%3A error result",
                                                       "warning title=strict%3A error result"]

    # the engine's sections read each grader's own rows, equal to the store's per-grader reading
    with Library.open(db_path) as lib:
        run = load_run(lib, out["id"])
        by_key = dict((g.key, rows) for g, rows in graders_with_results(lib, out["id"]))
        for section in run.sections:
            mine = [(r["sample_id"], r["status"], r["score"]) for r in section_rows(lib, out["id"], section)]
            assert mine == [(r["sample_id"], r["status"], r["score"]) for r in by_key[section.key]]
        assert [s.pass_threshold for s in run.sections] == [1.0, 0.5, 0.5]
        assert run.overall_mean == overall["mean"]

    # the finished run's report, asked later, says the same (exit status, verdict, JUnit)
    again_junit = tmp_path / "again.xml"
    again = cli("runs", "report", str(out["id"]), "--json", "--junit", str(again_junit))
    assert again.returncode == 1
    reported = json.loads(again.stdout)
    assert reported["verdict"] == verdict and reported["graders"] == out["graders"]
    assert reported["usage"] == out["usage"]
    assert again_junit.read_text() == junit.read_text()
    human = cli("runs", "report", str(out["id"]))
    assert "judge v1: mean" in human.stdout and "strict v1: mean" in human.stdout


def test_thresholds_of_a_suite(cli, suited: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    ran = json.loads(cli("run", "ci", "qa", "--limit", "11", "--json").stdout)  # q11 (the fault) left out
    overall = ran["overall"]["aggregates"]["mean"]
    means = {g["key"]: g["aggregates"]["mean"] for g in ran["graders"]}
    assert ran["verdict"]["outcome"] == "pass" and overall is not None
    run_id = str(ran["id"])
    # --fail-under SCORE is the suite's overall score by its rule (here the mean of each sample's scores)
    below = cli("runs", "report", run_id, "--fail-under", f"{overall + 0.01:.4f}", "--json")
    assert below.returncode == 1
    reasons = json.loads(below.stdout)["verdict"]["reasons"]
    assert reasons == [f"overall score {overall:.4f} is below --fail-under {overall + 0.01:.4f}"]
    assert cli("runs", "report", run_id, "--fail-under", f"{overall - 0.01:.4f}").returncode == 0
    # --fail-under KEY=SCORE per grader, --github one ::error per failing grader
    missed = cli("runs", "report", run_id, "--fail-under", f"judge={means['judge'] + 0.01:.4f}",
                 "--fail-under", f"exact={means['exact'] - 0.01:.4f}", "--github")
    assert missed.returncode == 1
    errors = [line for line in missed.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith("::error title=judge below threshold::")
    assert "FAIL" in missed.stderr.splitlines()[-1]
    refused = cli("run", "ci", "qa", "--fail-under", "nobody=0.5")
    assert refused.returncode == 2 and "nobody" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert runs_made(cli) == 1


def test_fail_under_on_a_suite_without_an_overall_rule_is_each_graders(cli, suited: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    ran = json.loads(cli("run", "bare", "qa", "--limit", "11", "--json").stdout)
    assert "overall" not in ran and ran["verdict"]["mean"] is None
    means = {g["key"]: g["aggregates"]["mean"] for g in ran["graders"]}
    assert means["exact"] < means["judge"]  # 6/11 against 6/9
    between = (means["exact"] + means["judge"]) / 2
    missed = cli("runs", "report", str(ran["id"]), "--fail-under", f"{between:.4f}", "--json", "--github")
    assert missed.returncode == 1
    verdict = json.loads(missed.stdout)["verdict"]
    assert verdict["fail_under_applies_to"] == "each grader"
    assert [(c["key"], c["passed"]) for c in verdict["graders"]] == [("exact", False), ("judge", True)]
    assert verdict["reasons"] == [f"exact mean {means['exact']:.4f} is below --fail-under {between:.4f}"]
    assert "for each grader" in verdict["sentence"]
    errors = [line for line in missed.stderr.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "exact below threshold" in errors[0]  # no "overall" error: there is none
    # a grader's own threshold takes precedence over the bare one
    eased = cli("runs", "report", str(ran["id"]), "--fail-under", f"{between:.4f}", "--fail-under", "exact=0.1")
    assert eased.returncode == 0, eased.stderr
    assert cli("runs", "report", str(ran["id"]), "--fail-under", f"{means['exact'] - 0.01:.4f}").returncode == 0
    # the help says it in one sentence
    assert "every grader's mean must reach SCORE" in NO_OVERALL
    assert "no overall rule" in " ".join(cli("run", "--help").stdout.split())


def test_markdown_against_a_baseline_per_grader(cli, suited: FakeJudgeServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = json.loads(cli("run", "ci", "qa", "--limit", "9", "--json").stdout)["id"]
    suited.add_rule("Capital of France\\? \\(1\\)", '{"reasoning": "changed its mind", "verdict": "FAIL"}')
    markdown = tmp_path / "m.md"
    second = cli("run", "ci", "qa", "--limit", "9", "--no-cache", "--baseline", str(first), "--markdown",
                 str(markdown), "--json")
    assert second.returncode == 0, second.stderr
    text = markdown.read_text()
    parts = {key: text.split(f"### {key} v1: the 5 lowest scores")[1].split("###")[0]
             for key in ("exact", "judge", "strict")}
    assert "0 flipped up (fail to pass), 0 flipped down" in parts["exact"]
    assert "mean change +0.0000" in parts["exact"]
    for key in ("judge", "strict"):  # q1 flipped for both judges
        assert f"Against baseline run {first}, on 9 samples both scored: mean change -0.1111" in parts[key]
        assert "0 flipped up (fail to pass), 1 flipped down (pass to fail)" in parts[key]
        assert "**Baseline verdict:" in parts[key]
    other = json.loads(cli("run", "judge", "other", "--json").stdout)["id"]
    refused = cli("run", "ci", "qa", "--baseline", str(other))
    assert refused.returncode == 2 and "same dataset" in refused.stderr


def stored_grader_tokens(db: Path, run_id: int) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens)"
                            " FROM grader_results WHERE run_id = ?", (run_id,)).fetchone()
    finally:
        conn.close()


def test_usage_and_cost_per_grader_and_endpoint(cli, suited: FakeJudgeServer, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("run", "--graders", "exact,judge,strict", "qa", "--limit", "9", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    usage = out["usage"]
    sent = suited.usage_sent
    total = usage["total"]
    assert {k: total[k] for k in sent} == sent and total["calls"] == 18
    assert total["cached_tokens"] > 0
    # the cached tokens of the judges' rows are stored on their grader rows (the new column)
    assert stored_grader_tokens(db_path, out["id"]) == (sent["prompt_tokens"], sent["completion_tokens"],
                                                        sent["cached_tokens"])
    graders, endpoints = usage["graders"], usage["endpoints"]
    assert graders["exact"]["calls"] == 0 and graders["exact"]["cost_usd"] == "0"
    assert graders["judge"]["calls"] == graders["strict"]["calls"] == 9
    assert {k: v for k, v in graders["judge"].items() if k != "cost_usd"} == \
        {k: v for k, v in endpoints["fake"].items() if k != "cost_usd"}
    assert graders["strict"] == endpoints["dear"]
    costs = Fraction(0)
    for name, (price_in, price_out) in PRICES.items():
        line = endpoints[name]
        cost = (line["prompt_tokens"] * Fraction(price_in) + line["completion_tokens"] * Fraction(price_out)) / 1_000_000
        assert line["cost_usd"] == exact_decimal(cost)
        costs += cost
    assert total["cost_usd"] == exact_decimal(costs)
    assert graders["judge"]["prompt_tokens"] + graders["strict"]["prompt_tokens"] == sent["prompt_tokens"]
    shown = json.loads(cli("runs", "show", str(out["id"]), "--json").stdout)["run"]
    assert shown["graders"] == out["graders"] and shown["usage"] == usage
    assert f"  grader judge: 9 calls, {graders['judge']['prompt_tokens']:,} prompt tokens" in \
        cli("runs", "show", str(out["id"])).stdout
    human = cli("runs", "report", str(out["id"])).stdout
    assert "  grader strict: 9 calls" in human and "  endpoint dear: 9 calls" in human


def test_dry_run_of_a_suite_lists_each_grader(cli, suited: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    dry = cli("run", "ci", "qa", "--limit", "9", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    estimates = {e["grader"]: e for e in json.loads(dry.stdout)["graders"]}
    assert list(estimates) == ["exact", "judge", "strict"] and runs_made(cli) == 0
    assert estimates["exact"]["judge_calls"] == 0 and "calls no endpoint" in estimates["exact"]["notes"][0]
    assert estimates["judge"]["judge_calls"] == estimates["strict"]["judge_calls"] == 9
    assert set(estimates["strict"]["endpoints"]) == {"dear"}
    one_off = json.loads(cli("run", "--graders", "exact,judge", "qa", "--limit", "9", "--dry-run", "--json").stdout)
    assert [e["grader"] for e in one_off["graders"]] == ["exact", "judge"]
    assert suited.usage_sent["calls"] == 0
    ran = json.loads(cli("run", "ci", "qa", "--limit", "9", "--json").stdout)
    for key in ("judge", "strict"):
        spent = ran["usage"]["graders"][key]
        assert estimates[key]["judge_calls"] == spent["calls"]
        assert abs(estimates[key]["prompt_tokens"] - spent["prompt_tokens"]) <= 0.1 * spent["prompt_tokens"]
    human = cli("run", "ci", "qa", "--limit", "10", "--dry-run").stdout
    assert "exact v1: 10 samples, 0 judge calls" in human
    assert "judge v1: 10 samples, 1 judge calls, 9 answered by the cache" in human
    assert "strict v1: 10 samples, 1 judge calls, 9 answered by the cache" in human


@pytest.fixture
def slow_server() -> Iterator[FakeJudgeServer]:
    srv = FakeJudgeServer(latency_ms=20).start()  # answers take a moment: calls really overlap
    yield srv
    srv.stop()


def graders_scores(db: Path, run_id: int) -> dict[str, list[tuple[str, str, float | None]]]:
    with Library.open(db) as lib:
        return {g.key: [(r["sample_id"], r["status"], r["score"]) for r in rows]
                for g, rows in graders_with_results(lib, run_id)}


def test_max_cost_stops_a_suite_and_resumes_to_the_same_scores(cli, slow_server: FakeJudgeServer,  # type: ignore[no-untyped-def]
                                                              db_path: Path) -> None:
    prepare(db_path, slow_server, [
        Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i}) " + "Think. " * (i % 5))],
               completion="Paris" if i % 3 else "Lyon", expected="Paris") for i in range(30)])
    cap = Fraction("0.004")
    capped = cli("run", "ci", "qa", "--max-cost", "0.004", "--json")
    assert capped.returncode == 2, capped.stderr
    result = json.loads(capped.stdout)
    assert result["status"] == "stopped" and 0 < result["done"] < 30
    assert "budget" in result["verdict"]["reasons"][0] and "stopped: budget" in capped.stderr
    spent = Fraction(result["usage"]["total"]["cost_usd"])
    assert spent >= cap
    # past the cap by at most the calls in flight: each endpoint's connection window (2 calls)
    conn = sqlite3.connect(db_path)
    try:
        price_in, price_out = (Fraction(x) for x in PRICES["dear"])
        per_call = max((p * price_in + c * price_out) / 1_000_000 for p, c in conn.execute(
            "SELECT prompt_tokens, completion_tokens FROM grader_results WHERE run_id = ? AND prompt_tokens > 0",
            (result["id"],)))
    finally:
        conn.close()
    assert spent - cap <= 2 * 2 * per_call
    calls_before = slow_server.usage_sent["calls"]
    assert result["usage"]["total"]["calls"] == calls_before

    resumed = cli("run", "--resume", str(result["id"]), "--max-cost", "1", "--json")
    assert resumed.returncode == 0, resumed.stderr
    finished = json.loads(resumed.stdout)
    assert finished["status"] == "completed" and finished["done"] == 30
    assert slow_server.usage_sent["calls"] == 2 * 30  # each judge graded each sample once: nothing twice
    assert finished["usage"]["total"]["calls"] == 60
    uncapped = json.loads(cli("run", "ci", "qa", "--no-cache", "--json").stdout)
    assert graders_scores(db_path, result["id"]) == graders_scores(db_path, uncapped["id"])
    # the same scores give the same figures (tokens and cost differ: the uncapped run asked afresh)
    figures = ("key", "version", "aggregates", "counts", "decisions", "total")
    assert [{k: g[k] for k in figures} for g in finished["graders"]] == \
        [{k: g[k] for k in figures} for g in uncapped["graders"]]
