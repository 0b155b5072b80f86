"""The window's ``endpoints trust`` (issue 44, item 1): where a Test or a run would send the user's
key to an endpoint a teammate changed, the window asks with a dialog listing the change, who made
it and when; nothing is sent before Approve. Real judges on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest
from judge_helpers import qa, without_proxy_variables
from net_servers import JudgeLog, ThreadServer, naming_judge

from studio.cli import main
from studio.core.models import BinaryJudge
from studio.core.store.authors import USER_ENV
from studio.core.store.endpoint_trust import pending
from studio.core.store.endpoints import EndpointRepository

KEY = "sk-alice-window-3c8e1f0a92"


@pytest.fixture(autouse=True)
def alice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_ENV, "alice")
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    without_proxy_variables(monkeypatch)


def moved_by_bob(ctx: Any, monkeypatch: pytest.MonkeyPatch, first: str, second: str) -> None:
    """alice adds endpoint ``judge`` at ``first``; bob's studio points it at ``second``."""
    assert main(["--db", str(ctx.db_path), "endpoints", "add", "judge", "--base-url", first, "--model", "judge",
                 "--api-key-env", "JUDGE_API_KEY", "--timeout", "5"]) == 0
    monkeypatch.setenv(USER_ENV, "bob")
    repo = EndpointRepository.of(ctx.library)
    repo.save(repo.get("judge").model_copy(update={"base_url": second}))
    monkeypatch.setenv(USER_ENV, "alice")


def test_the_approval_dialog_lists_the_change_as_plain_text(qtbot: Any, ctx: Any, monkeypatch: Any) -> None:
    from studio.ui.dialogs.endpoint_trust import ApproveEndpointDialog

    moved_by_bob(ctx, monkeypatch, "http://127.0.0.1:9/v1", "http://<b>evil</b>.example/v1")
    held = pending(EndpointRepository.of(ctx.library).get("judge"))
    assert held is not None
    dialog = ApproveEndpointDialog(held)
    qtbot.addWidget(dialog)
    text = dialog.text.toPlainText()
    assert "its base URL was changed from http://127.0.0.1:9/v1 to http://<b>evil</b>.example/v1" in text
    assert "by bob on" in text and "not sent until you approve" in text
    assert dialog.cancel_button.isDefault() and not dialog.approve_button.isDefault()
    dialog.approve_button.click()
    assert dialog.result() == dialog.DialogCode.Accepted


def test_test_asks_before_sending_the_key_to_a_teammates_new_url(
    qtbot: Any, window: Any, ctx: Any, messages: Any, monkeypatch: Any
) -> None:
    approved, theirs = JudgeLog(), JudgeLog()
    with ThreadServer(naming_judge(approved)) as first, ThreadServer(naming_judge(theirs)) as second:
        second_url = f"http://127.0.0.1:{second.port}/v1"
        moved_by_bob(ctx, monkeypatch, f"http://127.0.0.1:{first.port}/v1", second_url)
        dialog = window.settings()
        qtbot.addWidget(dialog)
        page = dialog.endpoints
        page.reload(select="judge")
        assert page.base_url.text() == second_url
        messages.approve_answer = False
        page.test_button.click()
        qtbot.waitUntil(lambda: page.test_button.isEnabled() and bool(messages.approvals), timeout=15_000)
        assert "your key is not sent until you approve" in page.result.text()
        assert "by bob on" in page.result.text()
        assert [h.config.name for h in messages.approvals] == ["judge"] and theirs.requests == []
        # a save that does not touch where the key goes approves nothing
        page.concurrency.setValue(3)
        assert page.save()
        assert pending(EndpointRepository.of(ctx.library).get("judge")) is not None

        messages.approve_answer = True
        page.test_button.click()
        qtbot.waitUntil(lambda: "Answered" in page.result.text(), timeout=15_000)
        assert theirs.requests and theirs.requests[0][1]["authorization"] == f"Bearer {KEY}"
        assert pending(EndpointRepository.of(ctx.library).get("judge")) is None


def test_a_run_asks_before_sending_the_key_and_cancel_starts_nothing(
    qtbot: Any, window: Any, ctx: Any, messages: Any, monkeypatch: Any
) -> None:
    approved, theirs = JudgeLog(), JudgeLog()
    with ThreadServer(naming_judge(approved)) as first, ThreadServer(naming_judge(theirs)) as second:
        moved_by_bob(ctx, monkeypatch, f"http://127.0.0.1:{first.port}/v1", f"http://127.0.0.1:{second.port}/v1")
        ctx.library.graders.create(BinaryJudge(key="named", criteria="c", endpoint="judge"))
        ctx.library.datasets.create("d", [qa("s000", "q", "answer for SAMPLE-s000")])
        panel = window.run_panel
        panel.reload_choices()
        panel.select(grader="named", dataset="d")
        messages.approve_answer = False
        assert panel.start() is None
        assert len(messages.approvals) == 1 and ctx.library.runs.list() == []
        assert theirs.requests == [] and approved.requests == []

        messages.approve_answer = True
        run_id = panel.start()
        assert run_id is not None
        qtbot.waitUntil(lambda: not panel.is_running(), timeout=60_000)
        assert ctx.library.runs.results(run_id)[0]["status"] == "ok"
        assert [h["authorization"] for _, h in theirs.requests] == [f"Bearer {KEY}"]


def test_a_teammates_unreadable_endpoint_row_is_a_sentence_on_the_page(qtbot: Any, window: Any, ctx: Any) -> None:
    import json

    from sqlalchemy import update

    from studio.core.store.tables import endpoints

    assert main(["--db", str(ctx.db_path), "endpoints", "add", "judge", "--base-url", "http://127.0.0.1:9/v1",
                 "--model", "judge"]) == 0
    with ctx.library.engine.begin() as conn:
        conn.execute(update(endpoints).values(config=json.dumps({"name": "judge", "base_url": "ftp://x"}),
                                              updated_by="bob"))
    dialog = window.settings()
    qtbot.addWidget(dialog)
    page = dialog.endpoints
    page.reload(select="judge")
    assert "endpoint “judge” (written by bob) stored in this library is broken" in page.result.text()
    assert "delete it with `grader-studio endpoints remove judge`" in page.result.text()


def test_generate_asks_before_sending_the_key_and_cancel_sends_nothing(
    qtbot: Any, window: Any, ctx: Any, messages: Any, monkeypatch: Any
) -> None:
    """The Generate dialog offers the same approval as a run: Cancel sends nothing and creates no
    dataset, Approve generates with the key sent to the teammate's URL the user approved."""
    approved, theirs = JudgeLog(), JudgeLog()
    with ThreadServer(naming_judge(approved)) as first, ThreadServer(naming_judge(theirs)) as second:
        moved_by_bob(ctx, monkeypatch, f"http://127.0.0.1:{first.port}/v1", f"http://127.0.0.1:{second.port}/v1")
        ctx.library.datasets.create("d", [qa("s000", "q", "answer for SAMPLE-s000")])
        dialog = window.datasets_view.open_generate()
        qtbot.addWidget(dialog)
        dialog.source.setCurrentText("d")
        dialog.endpoint.setCurrentText("judge")
        messages.approve_answer = False
        dialog.start()
        qtbot.waitUntil(lambda: not dialog.running and bool(messages.approvals), timeout=15_000)
        assert [h.config.name for h in messages.approvals] == ["judge"]
        assert "your key is not sent until you approve" in dialog.status.text()
        assert theirs.requests == [] and approved.requests == [] and dialog.generation is None

        messages.approve_answer = True
        dialog.start()
        qtbot.waitUntil(lambda: dialog.generation is not None or (not dialog.running and "Generat" not in dialog.status.text()), timeout=30_000)
        assert dialog.generation is not None, (dialog.status.text(), messages.approvals)
        assert dialog.generation.stored == 1 and len(messages.approvals) == 2
        assert [h["authorization"] for _, h in theirs.requests] == [f"Bearer {KEY}"]
        assert pending(EndpointRepository.of(ctx.library).get("judge")) is None


def test_the_report_cards_probes_ask_before_sending_the_key(
    qtbot: Any, window: Any, ctx: Any, messages: Any, monkeypatch: Any
) -> None:
    """The judge's report card (bias probes) offers the same approval: Cancel sends nothing,
    Approve runs the probes with the key sent where the user approved."""
    approved, theirs = JudgeLog(), JudgeLog()
    with ThreadServer(naming_judge(approved)) as first, ThreadServer(naming_judge(theirs)) as second:
        moved_by_bob(ctx, monkeypatch, f"http://127.0.0.1:{first.port}/v1", f"http://127.0.0.1:{second.port}/v1")
        ctx.library.graders.create(BinaryJudge(key="named", criteria="c", endpoint="judge"))
        ctx.library.datasets.create("d", [qa(f"s00{i}", "q", f"answer for SAMPLE-s00{i}") for i in range(2)])
        ctx.datasets_changed.emit()
        card = window.page.report_card
        card.set_grader("named", ctx.library.graders.get("named").definition)
        card.dataset.setCurrentText("d")
        card.limit.setValue(2)
        messages.approve_answer = False
        card.run_probes()
        qtbot.waitUntil(lambda: card.cancel is None and bool(messages.approvals), timeout=15_000)
        assert [h.config.name for h in messages.approvals] == ["judge"]
        assert "your key is not sent until you approve" in card.status.text()
        assert theirs.requests == [] and approved.requests == []

        messages.approve_answer = True
        card.run_probes()
        qtbot.waitUntil(lambda: card.cancel is None and len(messages.approvals) == 2 and bool(theirs.requests),
                        timeout=60_000)
        qtbot.waitUntil(lambda: card.cancel is None, timeout=60_000)
        assert all(h["authorization"] == f"Bearer {KEY}" for _, h in theirs.requests)
        assert pending(EndpointRepository.of(ctx.library).get("judge")) is None
