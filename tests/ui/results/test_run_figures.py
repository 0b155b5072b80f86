"""The window's run page shows the verdict, tokens and cost ``run`` prints, and saves the same JUnit
XML and markdown; the Settings endpoint editor keeps an endpoint's prices exactly."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from junitparser import JUnitXml

from studio.core.engine.sections import load_run
from studio.core.engine.summary import run_aggregates
from studio.core.engine.usage import format_usd, run_usage
from studio.core.models import BinaryJudge, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store.endpoints import EndpointRepository
from studio.ui.results import ResultsView

WAIT_MS = 20_000


def judged_run(lib: Any) -> int:
    EndpointRepository.of(lib).save(EndpointConfig(name="priced", base_url="http://127.0.0.1:9/v1",
                                                   model="gpt-4o-mini", price_input="2.5", price_output="10"))
    lib.graders.create(BinaryJudge(key="judge", criteria="Right?", endpoint="priced"))
    dataset = lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")], completion="a")
                                        for i in range(4)])
    run_id = lib.runs.create(lib.graders.get("judge").id, 1, dataset.id, 4, settings={"pass_threshold": 0.5}).id
    calls = [{"label": "verdict", "cached": False, "prompt_tokens": 1000, "completion_tokens": 30}]
    lib.runs.write_results(run_id, [
        (i, f"s{i}", Outcome(score=1.0 if i else 0.0, rationale="PASS" if i else "FAIL\nwrong answer",
                             details={"endpoint": "priced", "calls": calls},
                             prompt_tokens=1000, completion_tokens=30, cached_tokens=200 * i))
        for i in range(4)])
    lib.runs.set_status(run_id, "completed", aggregates=run_aggregates(lib, run_id, 0.5))
    return run_id


def test_run_page_shows_usage_and_cost_and_saves_reports(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_id = judged_run(app_ctx.library)
    view = ResultsView(app_ctx)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.model.loaded, timeout=WAIT_MS):
        view.set_run(run_id)
    qtbot.waitUntil(lambda: view.summary is not None, timeout=WAIT_MS)
    usage = run_usage(app_ctx.library, load_run(app_ctx.library, run_id))
    # 4 x (1000 x 2.5 + 30 x 10) / 1e6 = 0.0112 exactly
    assert usage.cost == Decimal("0.0112")
    text = view.summary_bar.text.text()
    assert "4 judge calls" in text and "4,000 prompt tokens (1,200 cached)" in text
    assert f"cost {format_usd(usage.cost)}" in text and "$0.0112" in text

    junit = tmp_path / "run.xml"
    with qtbot.waitSignal(view.report_button.saved, timeout=WAIT_MS):
        view.report_button.save("junit", junit)
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 0, 0)
    markdown = tmp_path / "run.md"
    with qtbot.waitSignal(view.report_button.saved, timeout=WAIT_MS):
        view.report_button.save("markdown", markdown)
    assert "| judge v1 | 0.7500 (" in markdown.read_text() and "$0.0112" in markdown.read_text()
    with qtbot.waitSignal(view.report_button.failed, timeout=WAIT_MS) as failed:
        view.report_button.save("markdown", tmp_path / "missing" / "run.md")
    assert "No such file" in failed.args[0]


def test_settings_edit_an_endpoints_prices(qtbot: Any, window: Any, ctx: Any, messages: Any) -> None:
    dialog = window.settings()
    qtbot.addWidget(dialog)
    page = dialog.endpoints
    page.add_button.click()
    page.name.setText("paid")
    page.base_url.setText("http://127.0.0.1:9/v1")
    page.model.setText("gpt-4o-mini")
    page.price_input.setText("0.15")
    page.price_output.setText("0.6")
    page.price_cached_input.setText("0.075")
    assert page.save()
    config = EndpointRepository.of(ctx.library).get("paid")
    assert (config.price_input, config.price_output, config.price_cached_input) == (
        Decimal("0.15"), Decimal("0.6"), Decimal("0.075"))
    page._show("paid")
    assert page.price_cached_input.text() == "0.075"
    page.price_cached_input.clear()
    page.price_output.setText("sixty cents")
    assert not page.save()
    title, sentence = messages.errors[-1]
    assert "The output price must be a number of US dollars" in sentence and "\n" not in sentence
    assert EndpointRepository.of(ctx.library).get("paid").price_output == Decimal("0.6")
    page.price_input.clear()
    page.price_output.clear()
    assert page.save()
    assert EndpointRepository.of(ctx.library).get("paid").price_input is None


def test_run_page_saves_a_suite_runs_reports_per_grader(qtbot, app_ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.core.engine.runner import RunOptions, execute_run, start_run
    from studio.core.models import BuiltinGrader

    lib = app_ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.graders.create(BuiltinGrader(key="has", function="contains"))
    lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")],
                                     completion="Paris" if i % 2 else "It is Paris", expected="Paris")
                              for i in range(6)])
    run_id = start_run(lib, None, "d", RunOptions(graders=["exact", "has"], overall="mean")).id  # type: ignore[arg-type]
    execute_run(lib, run_id)
    view = ResultsView(app_ctx)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.model.loaded, timeout=WAIT_MS):
        view.set_run(run_id)
    junit = tmp_path / "suite.xml"
    with qtbot.waitSignal(view.report_button.saved, timeout=WAIT_MS):
        view.report_button.save("junit", junit)
    suites = {s.name: (s.tests, s.failures, s.errors, s.skipped) for s in JUnitXml.fromfile(str(junit))}
    assert suites == {"exact v1": (6, 3, 0, 0), "has v1": (6, 0, 0, 0)}  # each grader's own results
    markdown = tmp_path / "suite.md"
    with qtbot.waitSignal(view.report_button.saved, timeout=WAIT_MS):
        view.report_button.save("markdown", markdown)
    text = markdown.read_text()
    assert "| exact v1 | 0.5000 (" in text and "| has v1 | 1.0000 " in text
    assert "| overall (mean) | 0.7500 (" in text
