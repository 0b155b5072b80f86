"""The engine's CI pieces in-process: thresholds and verdicts, GitHub's 50-line cap and escaping,
JUnit that stays valid XML whatever a judge wrote, usage per endpoint (composites included) priced
exactly, spend caps, the usage an endpoint's reply carries, and the dry run's tokenizer choice."""

from __future__ import annotations

import threading
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from junitparser import JUnitXml

from studio.core.engine.budget import Budget, BudgetError, Caps, parse_money
from studio.core.engine.reports.github import MAX_LINES, workflow_commands
from studio.core.engine.reports.junit import junit_xml
from studio.core.engine.reports.markdown import cell
from studio.core.engine.sections import load_run
from studio.core.engine.summary import run_aggregates
from studio.core.engine.usage import Spent, cost_of, exact_decimal, format_usd, run_usage
from studio.core.engine.verdict import ThresholdError, check_keys, judge, parse_thresholds
from studio.core.judges.http.providers.anthropic import PROVIDER as AnthropicAdapter
from studio.core.judges.http.providers.openai import PROVIDER as OpenAIAdapter
from studio.core.judges.tokens import counter_for, encoding_name
from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db



def make_run(library: Library, outcomes: list[Outcome], status: str = "completed", ids: list[str] | None = None) -> int:
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    ids = ids or [f"s{i}" for i in range(len(outcomes))]
    dataset = library.datasets.create("d", [Sample(id=sid, messages=[Turn(role="user", content="q")], completion="a")
                                            for sid in ids])
    run_id = library.runs.create(library.graders.get("g").id, 1, dataset.id, len(outcomes),
                                 settings={"pass_threshold": 0.5}).id
    library.runs.write_results(run_id, [(i, sid, o) for i, (sid, o) in enumerate(zip(ids, outcomes, strict=True))])
    library.runs.set_status(run_id, status, aggregates=run_aggregates(library, run_id, 0.5))
    return run_id


def test_thresholds_parse_and_refuse() -> None:
    parsed = parse_thresholds(["0.9", "judge=0.8", " other = 0.5 "])
    assert parsed.overall == 0.9 and parsed.graders == {"judge": 0.8, "other": 0.5}
    for bad in (["x"], ["0.9", "0.8"], ["=0.5"], ["a=1", "a=2"], ["nan"], ["a=high"]):
        with pytest.raises(ThresholdError):
            parse_thresholds(bad)
    with pytest.raises(ThresholdError, match="'nobody'"):
        check_keys(parse_thresholds(["nobody=0.5"]), ["judge"])


def test_verdict_exit_codes(library: Library) -> None:
    run_id = make_run(library, [Outcome.scored(1.0, {}), Outcome.scored(0.0, {}), Outcome.failure("boom")])
    run = load_run(library, run_id)
    assert judge(run).exit_code == 1  # an errored sample fails the run
    missed = judge(run, parse_thresholds(["g=0.9"]))
    assert missed.exit_code == 1 and missed.graders[0].passed is False and missed.mean == 0.5
    library.runs.set_status(run_id, "stopped", aggregates={**run.info.aggregates, "stopped": "stopped: budget"})
    not_done = judge(load_run(library, run_id), parse_thresholds(["0.1"]))
    assert not_done.exit_code == 2 and not_done.outcome == "not done" and "stopped: budget" in not_done.sentence


def test_github_commands_are_capped_and_escaped(library: Library) -> None:
    outcomes = [Outcome.failure(f"boom {i}%\nsecond line") for i in range(80)]
    run_id = make_run(library, outcomes, ids=[f"id,{i}:x" for i in range(80)])
    run = load_run(library, run_id)
    lines = workflow_commands(library, run, judge(run, parse_thresholds(["0.5", "g=0.5"])))
    assert len(lines) == MAX_LINES
    assert lines[0].startswith("::error title=Grader Studio run") and lines[1].startswith("::error title=g below")
    assert all(line.startswith("::warning") for line in lines[2:])
    assert lines[2] == "::warning title=g%3A error result::sample id,0:x: boom 0%25"
    # 2 error lines, 47 warnings shown, and the last line counting the other 80 - 47 = 33
    assert lines[-1].endswith(f"33 more error or invalid result(s) not shown; see `grader-studio runs show {run_id} --failed`")
    assert all("\n" not in line for line in lines)


def test_junit_stays_valid_xml_whatever_the_judge_wrote(library: Library, tmp_path) -> None:  # type: ignore[no-untyped-def]
    nasty = "score <0.5> & \x00\x1b bell\x07 \"quoted\""
    run_id = make_run(library, [Outcome.scored(0.2, {}, rationale=nasty), Outcome(status="skipped", rationale=nasty)],
                      ids=["<a&b>", "c\x01d"])
    path = tmp_path / "j.xml"
    path.write_text(junit_xml(library, load_run(library, run_id)), encoding="utf-8")
    suite = next(iter(JUnitXml.fromfile(str(path))))
    cases = list(suite)
    assert [c.name for c in cases] == ["<a&b>", "cd"]
    nul = "\ufffd"  # a NUL is stored as U+FFFD on both backends (studio/core/outside.py: PostgreSQL's text holds none)
    assert cases[0].result[0].message == f"score 0.2000 < pass threshold 0.5: score <0.5> & {nul} bell \"quoted\""
    assert (suite.tests, suite.failures, suite.skipped) == (2, 1, 1)


def test_junit_says_which_clause_of_the_rule_failed_a_sample(library: Library, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A judge's own FAIL decides before its score (pass_rule: the verdict clause), even when the
    score is also below the threshold: the failure is the verdict's, as the rule says, not the score's."""
    run_id = make_run(library, [Outcome.scored(0.0, {}, details={"verdict": "FAIL"}, rationale="wrong"),
                                Outcome.scored(0.9, {}, details={"verdict": "FAIL"}, rationale="wrong too"),
                                Outcome.scored(0.1, {}, rationale="low")], ids=["a", "b", "c"])
    path = tmp_path / "j.xml"
    path.write_text(junit_xml(library, load_run(library, run_id)), encoding="utf-8")
    cases = list(next(iter(JUnitXml.fromfile(str(path)))))
    assert [(c.result[0].type, c.result[0].message) for c in cases] == [
        ("verdict", "the judge's verdict is FAIL: wrong"), ("verdict", "the judge's verdict is FAIL: wrong too"),
        ("below threshold", "score 0.1000 < pass threshold 0.5: low")]


def test_markdown_cells_escape_tables() -> None:
    assert cell("a | b\nc `d` <e>") == "a \\| b c \\`d\\` \\<e\\>"


def judge_details(endpoint: str, calls: int = 1, failed: int = 0) -> dict[str, Any]:
    return {"endpoint": endpoint, "calls": [{"label": "v", "cached": False}] * calls + [{"label": "v", "failed": True}] * failed}


def test_usage_per_endpoint_and_composites_priced_exactly(library: Library) -> None:
    library.endpoints.save(EndpointConfig(name="a", base_url="http://x/v1", model="m", price_input="0.15",
                                          price_output="0.6"))
    library.endpoints.save(EndpointConfig(name="b", base_url="http://x/v1", model="m", price_input="3",
                                          price_output="15"))
    composite = {"components": [
        {"name": "one", "endpoint": "a", "prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 50, "judge_calls": 1},
        {"name": "two", "endpoint": "b", "prompt_tokens": 200, "completion_tokens": 20, "cached_tokens": 0, "judge_calls": 2}]}
    run_id = make_run(library, [
        Outcome(score=1.0, details=judge_details("a", 1, failed=3), prompt_tokens=1001, completion_tokens=7, cached_tokens=3),
        Outcome(score=0.0, details=composite, prompt_tokens=300, completion_tokens=30, cached_tokens=50),
        Outcome(score=1.0, details=judge_details("a", 0), cached=True),  # the response cache answered
    ])
    usage = run_usage(library, load_run(library, run_id))
    a, b = usage.endpoints["a"], usage.endpoints["b"]
    assert (a.calls, a.prompt_tokens, a.completion_tokens, a.cached_tokens) == (2, 1101, 17, 53)
    assert (b.calls, b.prompt_tokens, b.completion_tokens, b.cached_tokens) == (2, 200, 20, 0)
    expected = (Fraction(1101) * Fraction("0.15") + 17 * Fraction("0.6") + 200 * 3 + 20 * 15) / 1_000_000
    assert usage.cost == expected == usage.grader_cost["g"]
    assert usage.to_json()["total"]["cost_usd"] == exact_decimal(expected) == "0.00107535"
    library.endpoints.save(EndpointConfig(name="b", base_url="http://x/v1", model="m"))  # prices removed
    unpriced = run_usage(library, load_run(library, run_id))
    assert unpriced.cost is None and unpriced.unpriced == ["b"] and unpriced.endpoint_cost["a"] is not None


def test_cached_prompt_tokens_cost_the_cached_price_where_one_is_set() -> None:
    from studio.core.engine.dry_run import EndpointEstimate

    plain = EndpointConfig(name="a", base_url="http://x/v1", model="m", price_input="2", price_output="8")
    cheap = plain.model_copy(update={"price_cached_input": Decimal("0.5")})
    tally = Spent(calls=3, prompt_tokens=1000, completion_tokens=100, cached_tokens=600)
    assert cost_of(tally, plain) == Fraction(1000 * 2 + 100 * 8, 1_000_000)  # no discount known: full price
    assert cost_of(tally, cheap) == Fraction(400 * 2 + 600 * Fraction("0.5") + 100 * 8) / 1_000_000
    odd = Spent(calls=1, prompt_tokens=10, completion_tokens=0, cached_tokens=50)  # never more cached than sent
    assert cost_of(odd, cheap) == Fraction(10 * Fraction("0.5"), 1_000_000)
    estimate = EndpointEstimate(calls=1, prompt_tokens=1000, max_completion_tokens=10, config=cheap)
    low, high = estimate.cost_range() or (None, None)
    assert low == Fraction(1000 * Fraction("0.5"), 1_000_000) and high == Fraction(1000 * 2 + 10 * 8, 1_000_000)


def test_money_is_exact_until_shown() -> None:
    assert exact_decimal(Fraction(1, 8) / 1_000_000) == "0.000000125"
    assert Decimal(exact_decimal(Fraction(3, 10) + Fraction(6, 100))) == Decimal("0.36")
    assert format_usd(Fraction(12345, 100)) == "$123.45" and format_usd(Fraction(355, 1_000_000)) == "$0.000355"
    assert format_usd(None) == "no price"
    for bad in ("-1", "abc", "nan", "inf", "1,5"):
        with pytest.raises(BudgetError):
            parse_money(bad, "--max-cost")
    assert parse_money("$0.10", "x") == Decimal("0.10")


def test_a_budget_stops_admitting_at_its_cap() -> None:
    cancel = threading.Event()
    config = EndpointConfig(name="a", base_url="http://x/v1", model="m", price_input="1", price_output="1")
    budget = Budget(Caps(max_cost=Decimal("0.000003")), cancel, spent=Spent(0, 0, 0, 0))
    assert budget.admit()
    budget.spend(config, 1, 1)  # $0.000002
    assert budget.admit() and not cancel.is_set()
    budget.spend(config, 1, 0)  # $0.000003: the cap
    assert not budget.admit() and cancel.is_set() and budget.stopped
    assert "stopped: budget" in budget.reason and budget.to_json()["spent_cost_usd"] == "0.000003"
    tokens = Budget(Caps(max_tokens=10), threading.Event(), spent=Spent(0, 9, 0, 0))
    assert tokens.admit()
    tokens.spend(config, 1, 0)
    assert not tokens.admit()


def test_usage_read_from_replies() -> None:
    openai = OpenAIAdapter.parse({"choices": [{"message": {"content": "x"}}], "usage": {
        "prompt_tokens": 120, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 64}}})
    assert (openai.prompt_tokens, openai.completion_tokens, openai.cached_tokens) == (120, 9, 64)
    junk = OpenAIAdapter.parse({"choices": [{"message": {"content": "x"}}], "usage": {
        "prompt_tokens": "many", "prompt_tokens_details": None}})
    assert (junk.prompt_tokens, junk.cached_tokens) == (0, 0)
    anthropic = AnthropicAdapter.parse({"content": [{"type": "text", "text": "x"}], "usage": {
        "input_tokens": 20, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 3}})
    assert (anthropic.prompt_tokens, anthropic.completion_tokens, anthropic.cached_tokens) == (125, 3, 100)


def test_tokenizer_choice() -> None:
    assert encoding_name("gpt-4o-mini-2024-07-18") == "o200k_base"
    assert encoding_name("ft:gpt-4o-mini:org::abc") == "o200k_base"
    assert encoding_name("gpt-4-0613") == "cl100k_base" and encoding_name("openai/gpt-5-mini") == "o200k_base"
    assert encoding_name("llama-3.1-8b") is None
    exact = counter_for("gpt-4o")
    assert exact.exact and exact.count_messages([{"role": "user", "content": "Hello, world!"}]) == 3 + 3 + 1 + 4
    approx = counter_for("llama-3.1-8b")
    assert not approx.exact and "approximation" in approx.method
    assert approx.count_text("x" * 10) == 3
    assert not counter_for("gpt-4o", openai_encodings=False).exact


def test_a_run_without_judges_has_no_usage_and_a_judge_without_usage_still_counts_calls(library: Library) -> None:
    run_id = make_run(library, [Outcome.scored(1.0, {}), Outcome.scored(0.0, {})])
    usage = run_usage(library, load_run(library, run_id))
    assert usage.total == Spent() and usage.lines() == [] and usage.endpoints == {}
    # an endpoint that reports no usage: no tokens, but its calls are still counted
    library.runs.write_results(run_id, [(1, "s1", Outcome(score=0.0, details=judge_details("quiet", 2)))])
    library.runs.set_status(run_id, "completed", aggregates=run_aggregates(library, run_id, 0.5))
    quiet = run_usage(library, load_run(library, run_id)).endpoints["quiet"]
    assert (quiet.calls, quiet.tokens) == (2, 0)


def test_a_dry_run_of_a_grader_without_a_judge_calls_nothing(library: Library) -> None:
    from studio.core.engine.dry_run import dry_run

    make_run(library, [Outcome.scored(1.0, {})])
    (estimate,) = dry_run(library, "g", "d")
    assert (estimate.samples, estimate.calls, estimate.prompt_tokens) == (1, 0, 0)
    assert estimate.cost_range() == (0, 0) and "calls no endpoint" in estimate.notes[0]
