"""The judge's report card: the stored probe report shows on the judge's page, and Run probes
measures the judge off the GUI thread (a first-answer-biased scripted judge, over real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from judge_helpers import add_endpoint

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.probes import probe_judge
from studio.core.models import Sample, Turn, parse_grader
from studio.ui.judges.report_card import probe_rows


@pytest.fixture
def biased() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer(bias="first").start()
    yield server
    server.stop()


def _library(ctx: Any, server: FakeJudgeServer) -> None:
    add_endpoint(ctx.library, server, name="first")
    samples = [Sample(id=f"p{i}", messages=[Turn(role="user", content=f"What is {i} + {i}?")],
                      completion=str(2 * i), expected=str(2 * i),
                      metadata={"completion_a": str(2 * i), "completion_b": "no idea"}) for i in range(6)]
    ctx.library.datasets.create("pairs", samples)
    ctx.library.graders.create(parse_grader({"kind": "pairwise_judge", "key": "better", "endpoint": "first"}))
    ctx.library.graders.create(parse_grader({"kind": "builtin", "key": "exact", "function": "exact_match"}))
    ctx.datasets_changed.emit()
    ctx.graders_changed.emit()


def test_report_card_shows_the_stored_report_and_runs_probes(qtbot: Any, window: Any, ctx: Any,
                                                             biased: FakeJudgeServer) -> None:
    _library(ctx, biased)
    probe_judge(ctx.library, "better", "pairs", ["position"])  # as `grader-studio probe` would
    window.open_grader("better")
    card = window.page.report_card
    qtbot.waitUntil(lambda: card.table.rowCount() == 1, timeout=5000)
    cells = [card.table.item(0, c).text() for c in range(card.table.columnCount())]
    assert cells[0] == "position" and cells[1] == "6" and cells[-1] == "Flagged"
    assert "consistency 0.000" in cells[2] and "first position 1.000" in cells[2]
    assert "Biased: position" in card.status.text()

    card.dataset.setCurrentText("pairs")
    card.limit.setValue(4)
    card.run_button.click()
    assert not card.run_button.isEnabled()  # the probe runs on the pool; the window stays live
    qtbot.waitUntil(lambda: card.run_button.isEnabled(), timeout=20000)
    names = [card.table.item(r, 0).text() for r in range(card.table.rowCount())]
    assert names == ["verbosity", "reference", "position", "repeat"]
    assert card.table.item(2, 1).text() == "4" and "just now" in card.status.text()


def test_report_card_explains_a_grader_that_is_no_judge(qtbot: Any, window: Any, ctx: Any,
                                                        biased: FakeJudgeServer) -> None:
    _library(ctx, biased)
    window.open_grader("exact")
    card = window.page.report_card
    assert not card.run_button.isEnabled()
    assert "LLM judges" in card.status.text() and card.table.rowCount() == 0


def test_rows_are_plain_text_and_na_is_not_zero() -> None:
    rows = probe_rows({"probes": {"repeat": {"n": 3, "kappa": None, "sd": 0.0, "flip_rate": 0.0, "flag": False},
                                  "verbosity": {"n": 0, "mean_shift": None, "ci": None, "flip_rate": None,
                                                "flag": None, "reason": "no sample"}}})
    assert rows[0][2] == "kappa n/a, sd 0.000" and rows[0][5] == "No bias found"
    assert rows[1][2] == "shift n/a" and rows[1][4] == "n/a" and rows[1][5] == "No verdict"
    assert all(isinstance(cell, str) for row in rows for cell in row)


def test_results_summary_shows_pairwise_and_jury_numbers() -> None:
    from types import SimpleNamespace

    from studio.core.engine.summary import RunAggregates
    from studio.core.store.results_query import RunSummary
    from studio.ui.results.summary import aggregates_html

    run = SimpleNamespace(id=1, grader_key="pair", grader_version=1, label="pair v1", dataset="d", status="completed", done=4,
                          total=4, counts={"ok": 4})
    agg = {"pass_threshold": 0.5, "pairwise": {"win_a": 0.5, "win_b": 0.25, "tie": 0.0, "inconsistent": 0.25,
                                               "position_consistency": 0.75, "first_position_rate": None},
           "jury": {"fleiss_kappa": 0.4, "krippendorff_alpha": None, "ties": 1}}
    text = aggregates_html(RunSummary(run, 1, RunAggregates.read(agg), [], 0.0, 1.0, 0.0))
    assert "position consistency <b>75.0%</b>" in text and "first position rate <b>—</b>" in text
    assert "Fleiss κ <b>0.400</b>" in text and "Krippendorff α <b>—</b>" in text


def test_a_jurys_card_shows_its_jurors_against_the_labels(qtbot: Any, window: Any, ctx: Any,
                                                         fake_judge: FakeJudgeServer) -> None:
    from studio.core.engine.runner import run_grader
    from studio.core.models.labels import LabelInput

    add_endpoint(ctx.library, fake_judge, name="here")
    samples = [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"What is {i} + {i}?")],
                      completion=str(2 * i) if i % 2 else "no idea", expected=str(2 * i)) for i in range(1, 7)]
    ctx.library.datasets.create("sums", samples)
    ctx.library.labels.put_many("sums", [LabelInput(sample_id=f"s{i}", verdict="PASS" if i % 2 else "FAIL")
                                         for i in range(1, 7)])
    ctx.library.graders.create(parse_grader({"kind": "jury", "key": "panel", "jurors": [
        {"name": n, "grader": {"kind": "binary_judge", "key": n, "endpoint": "here", "criteria": "correct"}}
        for n in ("one", "two", "three")]}))
    run_grader(ctx.library, "panel", "sums")
    ctx.graders_changed.emit()
    window.open_grader("panel")
    card = window.page.report_card
    qtbot.waitUntil(lambda: card.jurors.rowCount() == 3, timeout=5000)
    row = [card.jurors.item(0, c).text() for c in range(card.jurors.columnCount())]
    assert row[0] == "one" and row[2] == "6" and row[3] == "0"
    assert row[5] == "100.0% of 6" and row[6].startswith("1.000")
    assert "Fleiss kappa 1.000" in card.jury_status.text()
