"""``run`` in CI: JUnit read by a JUnit library, markdown numbers equal to the run's, GitHub
annotations, exit statuses 0/1/2, and bad input refused before any run exists. Real processes, the
scripted judge over real HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

# 6 pass, 3 fail, 2 NA, and (last) 1 the server always refuses
PASSING, FAILING, NA = 6, 3, 2


def completion(i: int) -> str:
    if i < PASSING:
        return "Paris"
    if i < PASSING + FAILING:
        return "Lyon"
    if i < PASSING + FAILING + NA:
        return "[[judge:NA]] Paris"
    return "[[fault:500]] Paris"


@pytest.fixture
def judged(db_path: Path, fake_judge: FakeJudgeServer) -> FakeJudgeServer:
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(
            name="fake", base_url=fake_judge.base_url, model="gpt-4o-mini", retry_backoff=0.01, max_retries=1,
            timeout=5.0, price_input="0.15", price_output="0.60"))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="fake"))
        lib.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i})")],
                                          completion=completion(i), expected="Paris") for i in range(12)])
        lib.datasets.create("other", [Sample(id="x", messages=[Turn(role="user", content="hi")], completion="Paris",
                                             expected="Paris")])
    return fake_judge


def runs_made(cli) -> int:  # type: ignore[no-untyped-def]
    return len(json.loads(cli("runs", "list", "--json").stdout))


def test_junit_markdown_and_github_reports(cli, judged: FakeJudgeServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    summary_file = tmp_path / "step-summary.md"
    summary_file.write_text("earlier step\n")
    junit, markdown = tmp_path / "junit.xml", tmp_path / "summary.md"
    done = cli("run", "judge", "qa", "--json", "--junit", str(junit), "--markdown", str(markdown), "--github",
               env={"GITHUB_STEP_SUMMARY": str(summary_file)})
    assert done.returncode == 1, done.stderr  # one sample errored
    result = json.loads(done.stdout)
    assert result["verdict"]["outcome"] == "fail" and result["verdict"]["exit_code"] == 1

    xml = JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (12, FAILING, 1, NA)
    cases = {case.name: case for case in suite}
    assert set(cases) == {f"q{i}" for i in range(12)}
    assert cases["q0"].is_passed
    failure = cases["q6"].result[0]
    # a binary judge's FAIL (its score 0.0 with it): the rule's verdict clause decided, and says so
    assert isinstance(failure, Failure) and failure.message.startswith("the judge's verdict is FAIL")
    assert "Scripted rule gave FAIL." in failure.message  # the rationale's first line
    assert isinstance(cases["q9"].result[0], Skipped)
    assert isinstance(cases["q11"].result[0], Error) and "HTTP 500" in cases["q11"].result[0].message

    text = markdown.read_text()
    agg = result["aggregates"]
    assert f"| judge v1 | {agg['mean']:.4f} (" in text
    low, high = agg["pass_rate_ci"]  # the pass rate's Wilson interval, in words as the mean's
    assert low < agg["pass_rate"] < high
    assert f"| {agg['pass_rate']:.1%} ({low:.1%} to {high:.1%}) (score >= 0.5) |" in text
    assert f"| {PASSING + FAILING} | 0 | 1 | {NA} |" in text  # ok, invalid, error, NA
    worst = re.findall(r"^\| (q\d+) \| ([0-9.]+) \| (.*) \|$", text, re.M)
    assert [w[0] for w in worst[:3]] == ["q6", "q7", "q8"] and len(worst) == 5
    assert "**Verdict: FAIL**" in text
    assert f"| total | {result['usage']['total']['calls']} |" in text
    # the same markdown appended to GitHub's step summary
    assert summary_file.read_text() == "earlier step\n" + text + "\n"

    annotations = [line for line in done.stderr.splitlines() if line.startswith("::")]
    assert annotations == [line for line in annotations if line.startswith("::warning")]
    assert len(annotations) == 1 and "q11" in annotations[0]


def test_exit_statuses_and_thresholds(cli, judged: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    passed = cli("run", "judge", "qa", "--limit", "11", "--fail-under", "0.5", "--fail-under", "judge=0.6")
    assert passed.returncode == 0, passed.stderr
    assert "PASS" in passed.stderr.splitlines()[-1]
    missed = cli("run", "judge", "qa", "--limit", "11", "--fail-under", "judge=0.9", "--json", "--github")
    assert missed.returncode == 1
    verdict = json.loads(missed.stdout)["verdict"]
    assert verdict["graders"][0]["passed"] is False and verdict["grader_thresholds"] == {"judge": 0.9}
    assert any("below --fail-under judge=0.9" in r for r in verdict["reasons"])
    errors = [line for line in missed.stderr.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "judge below threshold" in errors[0]
    # the finished run's report, asked again later, says the same
    again = cli("runs", "report", str(json.loads(missed.stdout)["id"]), "--fail-under", "judge=0.9", "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["verdict"] == verdict
    # an annotation that states a mean states its 95% interval and the pass rate's, as the summary has them
    aggregates = json.loads(missed.stdout)["aggregates"]
    low, high = aggregates["mean_ci"]
    rate_low, rate_high = aggregates["pass_rate_ci"]
    stated = (f"; 95%25 interval [{low:.4f}, {high:.4f}], pass rate {aggregates['pass_rate']:.1%}"
              f" [{rate_low:.1%}, {rate_high:.1%}]").replace("%]", "%25]").replace("%,", "%25,").replace("% [", "%25 [")
    assert errors[0].endswith(stated), errors[0]
    overall = cli("runs", "report", str(json.loads(missed.stdout)["id"]), "--fail-under", "0.99", "--github")
    [line] = [line for line in overall.stdout.splitlines() if line.startswith("::error")]
    assert "overall mean" in line and line.endswith(stated), line


@pytest.mark.parametrize("extra", [
    ("--fail-under", "high"),
    ("--fail-under", "nobody=0.5"),
    ("--junit", "no/such/folder/junit.xml"),
    ("--markdown", "no/such/folder/summary.md"),
    ("--baseline", "999"),
    ("--max-cost", "-1"),
    ("--max-cost", "ten dollars"),
    ("--max-tokens", "-5"),
])
def test_bad_input_is_one_sentence_exit_2_and_no_run(cli, judged: FakeJudgeServer, extra) -> None:  # type: ignore[no-untyped-def]
    result = cli("run", "judge", "qa", *extra)
    assert result.returncode == 2, (extra, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr
    assert runs_made(cli) == 0


def test_baseline_of_another_dataset_and_a_malformed_price(cli, judged: FakeJudgeServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = json.loads(cli("run", "judge", "other", "--json").stdout)["id"]
    refused = cli("run", "judge", "qa", "--baseline", str(other), "--markdown", str(tmp_path / "m.md"))
    assert refused.returncode == 2 and "same dataset" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert runs_made(cli) == 1 and not (tmp_path / "m.md").exists()
    price = cli("endpoints", "add", "priced", "--base-url", judged.base_url, "--model", "m", "--price-input", "1,5")
    assert price.returncode == 2 and "--price-input" in price.stderr and "Traceback" not in price.stderr
    assert "priced" not in cli("endpoints", "list").stdout


def test_markdown_against_a_baseline(cli, judged: FakeJudgeServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = json.loads(cli("run", "judge", "qa", "--limit", "9", "--json").stdout)["id"]
    judged.add_rule("Capital of France\\? \\(1\\)", '{"reasoning": "changed its mind", "verdict": "FAIL"}')
    md = tmp_path / "m.md"
    done = cli("run", "judge", "qa", "--limit", "9", "--no-cache", "--markdown", str(md), "--baseline", str(first))
    assert done.returncode == 0, done.stderr
    text = md.read_text()
    assert f"Against baseline run {first}, on 9 samples both scored: mean change -0.1111" in text
    assert "0 flipped up (fail to pass), 1 flipped down (pass to fail)" in text
    assert "**Baseline verdict:" in text
