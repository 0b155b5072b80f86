"""One truth for every number (issue 32): one suite run, with a judge, stopped by --max-cost and then
resumed, read through every surface that states its numbers: ``run`` and ``runs report`` on stdout,
their ``--json``, the markdown summary, JUnit XML, GitHub annotations, ``runs show`` (text and JSON)
and the window's summary band. Each must give the same means, intervals, pass rates and counts, at
the stop and after the resume, because each reads the run's one summary (engine/summary.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from junitparser import JUnitXml

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import BinaryJudge, BuiltinGrader, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

Figures = dict[str, dict[str, Any]]  # grader key (or "overall") -> mean, ci, rate, n, counts


def completion(i: int) -> str:
    """Mostly right answers, some wrong (the judge's FAIL), some NA and some the server refuses."""
    return ["Paris", "Paris", "Lyon", "[[judge:NA]] Paris", "Paris", "[[fault:500]] Paris"][i % 6]


@pytest.fixture
def suite_db(db_path: Path) -> Path:
    server = FakeJudgeServer(latency_ms=20).start()  # calls overlap, so the cap stops mid-run
    try:
        with Library.open(db_path) as lib:
            EndpointRepository.of(lib).save(EndpointConfig(
                name="dear", base_url=server.base_url, model="gpt-4o-mini", retry_backoff=0.01, max_retries=1,
                timeout=5.0, price_input="2.5", price_output="10", max_concurrency=2))
            lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
            lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="dear"))
            lib.datasets.create("qa", [
                Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i})")],
                       completion=completion(i), expected="Paris") for i in range(36)])
            lib.suites.create(SuiteDefinition(key="ci", overall="mean", graders=[
                SuiteMember(grader="exact", threshold=1.0), SuiteMember(grader="judge")]))
        yield db_path
    finally:
        server.stop()


def _four(value: float | None) -> str:
    return "none" if value is None else f"{value:.4f}"


def _rate(value: float | None) -> str:
    return "none" if value is None else f"{value:.1%}"


def _rate_ci(pair: list[float] | None) -> tuple[str, str] | None:
    """The pass rate's 95% interval as every surface prints it (none: no graded result)."""
    return None if pair is None else (_rate(pair[0]), _rate(pair[1]))


def _pair(found: re.Match[str], low: str, high: str) -> tuple[str, str] | None:
    return None if found[low] is None else (found[low], found[high])


def _wilson(passes: int, graded: int) -> list[float]:
    """Wilson's 95% score interval, by hand."""
    z = 1.959963984540054
    p = passes / graded
    centre, half = p + z * z / (2 * graded), z * (p * (1 - p) / graded + z * z / (4 * graded * graded)) ** 0.5
    return [(centre - half) / (1 + z * z / graded), (centre + half) / (1 + z * z / graded)]


def from_json(doc: dict[str, Any]) -> Figures:
    """``run --json`` / ``runs report --json`` / ``runs show --json``'s run."""
    out: Figures = {}
    for entry in [*doc["graders"], *([doc["overall"]] if doc.get("overall") else [])]:
        agg = entry["aggregates"]
        low, high = agg["mean_ci"]
        out[entry["key"]] = {"mean": _four(agg["mean"]),
                             "ci": None if low is None else (_four(low), _four(high)),
                             "rate": _rate(agg["pass_rate"]), "rate_ci": _rate_ci(agg["pass_rate_ci"]), "n": agg["n"],
                             "counts": {k: v for k, v in entry["counts"].items() if v}}
    return out


LINE = re.compile(r"^  (?:(?P<key>\S+) v\d+|overall score \(mean\)): mean (?P<mean>\S+)"
                  r"(?: \[(?P<low>\S+), (?P<high>\S+)\])?(?:  pass rate (?P<rate>\S+%)(?: \[(?P<rlow>\S+), (?P<rhigh>\S+)\])?"
                  r" \(>= \S+\))?"
                  r"  n (?P<n>\d+)(?P<counts>.*)$")


def from_stdout(text: str) -> Figures:
    """The summary lines ``run``, ``runs report`` and ``runs show`` print."""
    out: Figures = {}
    for line in text.splitlines():
        found = LINE.match(line)
        if found is None:
            continue
        counts = dict(zip(found["counts"].split()[::2], map(int, found["counts"].split()[1::2]), strict=True))
        out[found["key"] or "overall"] = {
            "mean": found["mean"], "ci": None if found["low"] is None else (found["low"], found["high"]),
            "rate": found["rate"] or "none", "rate_ci": _pair(found, "rlow", "rhigh"), "n": int(found["n"]),
            "counts": counts}
    return out


ROW = re.compile(r"^\| (?:(?P<key>\S+) v\d+|overall \(mean\)) \| (?P<mean>\S+)(?: \((?P<low>\S+) to (?P<high>\S+)\))? \| "
                 r"(?P<rate>\S+)(?: \((?P<rlow>\S+) to (?P<rhigh>\S+)\))? \(score >= \S+\) \| (?P<ok>\d+) \| (?P<invalid>\d+) \| (?P<error>\d+) \| (?P<na>\d+) \|$")


def from_markdown(text: str) -> Figures:
    out: Figures = {}
    for line in text.splitlines():
        found = ROW.match(line)
        if found is None:
            continue
        counts = {k: int(found[k]) for k in ("ok", "error", "invalid", "na") if int(found[k])}
        out[found["key"] or "overall"] = {
            "mean": found["mean"], "ci": None if found["low"] is None else (found["low"], found["high"]),
            "rate": found["rate"] if found["rate"] != "n/a" else "none", "rate_ci": _pair(found, "rlow", "rhigh"),
            "counts": counts}
    return out


def from_window(db_path: Path, run_id: int) -> Figures:
    """The window's summary band (ui/results/summary.py) as it renders, tags stripped."""
    from studio.ui.results.summary import aggregates_html
    from studio.ui.results.view import _summary_and_figures

    with Library.open(db_path) as lib:
        band = aggregates_html(_summary_and_figures(lib, run_id, live=False))
    out: Figures = {}
    for line in band.split("<br>"):
        text = html.unescape(re.sub(r"<[^>]+>", "", line)).replace("\xa0", " ")
        found = re.match(r"^(?:(?P<key>\S+) v\d+: )?mean (?P<mean>\S+)(?: \[(?P<low>\S+), (?P<high>\S+)\])?"
                         r" +pass rate (?P<rate>\S+)(?: \[(?P<rlow>\S+), (?P<rhigh>\S+)\])? \(≥ \S+\) +n (?P<n>[\d,]+)",
                         text)
        if found is None:
            continue
        out[found["key"] or "overall"] = {
            "mean": found["mean"], "ci": None if found["low"] is None else (found["low"], found["high"]),
            "rate": found["rate"] if found["rate"] != "—" else "none", "rate_ci": _pair(found, "rlow", "rhigh"),
            "n": int(found["n"].replace(",", ""))}
    return out


def from_junit(path: Path) -> dict[str, dict[str, Any]]:
    """Per grader: the figures its properties state (each estimate with its interval) and the
    testcase counts."""
    out = {}
    for suite in JUnitXml.fromfile(str(path)):
        props = {p.name: p.value for p in suite.properties()}

        def number(name: str, shown: Any = _four) -> Any:
            return shown(float(props[name])) if props[name] else "none"  # noqa: B023 (read at once)

        ci = None if not props["mean_ci_low"] else (number("mean_ci_low"), number("mean_ci_high"))
        rate_ci = None if not props["pass_rate_ci_low"] else (number("pass_rate_ci_low", _rate),
                                                             number("pass_rate_ci_high", _rate))
        out[props["grader"]] = {"mean": number("mean"), "ci": ci, "rate": number("pass_rate", _rate),
                                "rate_ci": rate_ci, "n": int(props["n"]),
                                "tests": suite.tests, "failures": suite.failures, "errors": suite.errors,
                                "skipped": suite.skipped}
    return out


def from_github(text: str) -> dict[str, dict[str, Any]]:
    """Per grader: the mean its ``::error`` states (every grader misses --fail-under KEY=1.01) and
    its ``::warning`` lines (one per error or invalid result)."""
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        line = line.replace("%25", "%")  # a message's % as GitHub's runner reads it back
        found = re.match(r"^::error title=(\S+) below threshold::\S+ v\d+ mean (\S+) is below .*?\(run \d+\)"
                         r"(?:; 95% interval \[(\S+), (\S+)\])?(?:(?:, |; )pass rate (\S+%)(?: \[(\S+), (\S+)\])?)?$", line)
        if found:
            entry = out.setdefault(found[1], {"warnings": 0})
            entry.update(mean=found[2], ci=None if found[3] is None else (found[3], found[4]),
                         rate=found[5] or "none", rate_ci=None if found[6] is None else (found[6], found[7]))
        warned = re.match(r"^::warning title=(\S+)%3A (?:error|invalid) result::", line)
        if warned:
            out.setdefault(warned[1], {"warnings": 0})["warnings"] += 1
    return out


def same(reference: Figures, other: Figures, fields: tuple[str, ...], where: str) -> None:
    assert set(other) == set(reference), where
    for key, figures in reference.items():
        assert {f: other[key][f] for f in fields} == {f: figures[f] for f in fields}, f"{where}: {key}"


def every_surface(cli, db_path: Path, run_id: int, tmp: Path, reference: Figures) -> None:  # type: ignore[no-untyped-def]
    """Read run ``run_id`` through every surface and hold each to ``reference`` (run --json's)."""
    junit, markdown = tmp / f"junit-{run_id}.xml", tmp / f"summary-{run_id}.md"
    report = cli("runs", "report", str(run_id), "--junit", str(junit), "--markdown", str(markdown), "--github",
                 "--fail-under", "exact=1.01", "--fail-under", "judge=1.01")
    assert report.returncode in (1, 2), report.stderr
    same(reference, from_stdout(report.stdout), ("mean", "ci", "rate", "rate_ci", "n", "counts"), "runs report stdout")
    assert "metric " not in report.stdout  # a suite's graders are its metrics, each stated once
    report_json = json.loads(cli("runs", "report", str(run_id), "--json").stdout)
    same(reference, from_json(report_json), ("mean", "ci", "rate", "rate_ci", "n", "counts"), "runs report --json")
    shown = cli("runs", "show", str(run_id))
    same(reference, from_stdout(shown.stdout), ("mean", "ci", "rate", "rate_ci", "n", "counts"), "runs show")
    shown_json = json.loads(cli("runs", "show", str(run_id), "--json").stdout)["run"]
    same(reference, from_json(shown_json), ("mean", "ci", "rate", "rate_ci", "n", "counts"), "runs show --json")
    same(reference, from_markdown(markdown.read_text()), ("mean", "ci", "rate", "rate_ci", "counts"), "markdown")
    same(reference, from_window(db_path, run_id), ("mean", "ci", "rate", "rate_ci", "n"), "the window's summary")
    graders = {g["key"]: g for g in report_json["graders"]}
    for key, found in from_junit(junit).items():
        decisions = graders[key]["decisions"]
        assert found == {**{f: reference[key][f] for f in ("mean", "ci", "rate", "rate_ci", "n")},
                         "tests": graders[key]["total"], "failures": decisions["fail"], "errors": decisions["error"],
                         "skipped": decisions["na"]}, f"junit: {key}"
        # the pass rate is pass / (pass + fail) of the very testcases JUnit lists
        passed = found["tests"] - found["failures"] - found["errors"] - found["skipped"]
        assert _rate(passed / (passed + found["failures"])) == reference[key]["rate"]
    annotations = from_github(report.stdout)
    for key in ("exact", "judge"):
        counts = reference[key]["counts"]
        assert annotations[key] == {**{f: reference[key][f] for f in ("mean", "ci", "rate", "rate_ci")},
                                    "warnings": counts.get("error", 0) + counts.get("invalid", 0)}, key


def test_a_stopped_and_resumed_suite_run_says_the_same_everywhere(cli, suite_db: Path,  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path) -> None:
    capped = cli("run", "ci", "qa", "--max-cost", "0.004", "--json")
    assert capped.returncode == 2, capped.stderr
    stopped = json.loads(capped.stdout)
    assert stopped["status"] == "stopped" and 0 < stopped["done"] < 36
    at_stop = from_json(stopped)
    assert set(at_stop) == {"exact", "judge", "overall"}
    every_surface(cli, suite_db, stopped["id"], tmp_path, at_stop)

    junit, markdown = tmp_path / "resumed.xml", tmp_path / "resumed.md"
    resumed = cli("run", "--resume", str(stopped["id"]), "--max-cost", "1", "--junit", str(junit),
                  "--markdown", str(markdown), "--github")
    assert resumed.returncode == 1, resumed.stderr  # the refused calls are errors
    assert "metric " not in resumed.stdout
    finished = json.loads(cli("runs", "report", str(stopped["id"]), "--json").stdout)
    assert finished["status"] == "completed" and finished["done"] == 36
    reference = from_json(finished)
    # the resumed run's own output (stdout, its markdown and JUnit) says what every later reading says
    same(reference, from_stdout(resumed.stdout), ("mean", "ci", "rate", "rate_ci", "n", "counts"), "run --resume stdout")
    same(reference, from_markdown(markdown.read_text()), ("mean", "ci", "rate", "rate_ci", "counts"), "run --resume markdown")
    assert {k: v["mean"] for k, v in from_junit(junit).items()} == {k: reference[k]["mean"] for k in ("exact", "judge")}
    every_surface(cli, suite_db, stopped["id"], tmp_path, reference)
    # six answers in a cycle: exact passes the three bare "Paris"; the judge passes those, fails "Lyon",
    # says NA to one and cannot answer one
    assert reference["exact"]["n"] == 36 and reference["exact"]["mean"] == _four(18 / 36)
    assert reference["judge"]["counts"] == {"ok": 24, "error": 6, "na": 6}
    assert reference["judge"]["rate"] == _rate(18 / 24)
    assert reference["judge"]["rate_ci"] == _rate_ci(_wilson(18, 24)) == ("55.1%", "88.0%")

    # the same samples graded in one go give the same figures
    uncapped = json.loads(cli("run", "ci", "qa", "--json").stdout)
    assert from_json(uncapped) == reference


def test_a_suite_runs_sample_and_failures_read_per_grader(cli, suite_db: Path) -> None:  # type: ignore[no-untyped-def]
    ran = json.loads(cli("run", "ci", "qa", "--json").stdout)
    # q2 answered "Lyon": the judge's FAIL (with its rationale) comes first, then exact match's
    sample = cli("runs", "show", str(ran["id"]), "--sample", "q2", env={"COLUMNS": "200"}).stdout
    assert "the grader gave none" not in sample
    judge_at, exact_at = sample.index("judge v1: FAIL"), sample.index("exact v1: FAIL")
    assert judge_at < exact_at and "Scripted rule gave FAIL." in sample[judge_at:exact_at]
    assert "(pass ≥ 1)" in sample[exact_at:]  # each grader at its own threshold
    as_json = json.loads(cli("runs", "show", str(ran["id"]), "--sample", "q2", "--json").stdout)
    assert [(g["grader"], g["result"]) for g in as_json["graders"]] == [("judge", "FAIL"), ("exact", "FAIL")]

    failed = cli("runs", "show", str(ran["id"]), "--failed", env={"COLUMNS": "250"}).stdout
    header = next(line for line in failed.splitlines() if line.startswith("#"))
    assert all(word in header for word in ("GRADER", "RESULT", "INPUT", "OUTPUT", "EXPECTED"))
    rows = json.loads(cli("runs", "show", str(ran["id"]), "--failed", "--json").stdout)["results"]
    by = {(r["sample_id"], r["grader"]): r for r in rows}
    assert by[("q2", "judge")]["result"] == "FAIL" and by[("q2", "judge")]["completion"] == "Lyon"
    assert by[("q2", "judge")]["expected"] == "Paris" and by[("q5", "judge")]["result"] == "error"
    assert ("q0", "judge") not in by and ("q3", "judge") not in by  # a pass and an NA did not fail
    assert by[("q3", "exact")]["result"] == "FAIL"  # "[[judge:NA]] Paris" is not exactly "Paris"

    # the grid's per-grader filters are the same rule, in SQL: the judge's own FAIL, NA and errors
    from studio.core.models.pass_rule import decide_result
    from studio.core.store.results_query import ResultFilter, ResultQuery, load_ids
    from studio.core.store.run_graders import graders_with_results

    with Library.open(suite_db) as lib:
        dataset_id = lib.runs.raw(ran["id"]).dataset_id
        decided = {g.key: {r["sample_idx"]: decide_result(r, g.threshold) for r in rows}
                   for g, rows in graders_with_results(lib, ran["id"])}

        def picked(*conditions: tuple[str, str, float]) -> int:
            query = ResultQuery(ran["id"], dataset_id, ResultFilter(graders=conditions))
            return len(load_ids(lib.engine, query).ids)

        for key, limit in (("judge", 0.5), ("exact", 1.0)):
            for verdict in ("pass", "fail"):
                assert picked((key, verdict, limit)) == sum(d == verdict for d in decided[key].values())
        assert picked(("judge", "fail", 0.5)) == 6 and picked(("exact", "fail", 1.0)) == 18
        assert picked(("judge", "pass", 0.5), ("exact", "fail", 1.0)) == 0  # the judge passes only exact answers
