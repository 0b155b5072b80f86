"""Datasets ▸ Generate outputs…: the dialog generates from a real 127.0.0.1 server into a new dataset
that opens with its provenance shown, and Cancel mid-way keeps every answer already generated."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from studio.core.datasets import read_dataset
from studio.core.demo import model_endpoint_config
from studio.core.demo.fake_http import Reply
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.paths import demo_dir
from studio.core.store.endpoints import EndpointRepository
from studio.ui.datasets import DatasetsView
from studio.ui.qt import QtWidgets

WAIT_MS = 30_000


class GatedServer(FakeJudgeServer):
    """Answers the first ``free`` requests at once, then one more each time the test opens the gate."""

    def __init__(self, free: int) -> None:
        super().__init__(latency_ms=0)
        self.free = free
        self.gate = 0
        self.seen = 0

    async def dispatch(self, method: str, target: str, headers: dict[str, str], raw: bytes | None) -> Reply:
        if method == "POST":
            with self._lock:
                self.seen += 1
                number = self.seen
            while number > self.free + self.gate:
                await asyncio.sleep(0.005)
        return await super().dispatch(method, target, headers, raw)


@pytest.fixture
def server() -> Iterator[GatedServer]:
    srv = GatedServer(free=7).start()
    yield srv
    srv.gate = 10_000  # let anything still waiting finish
    srv.stop()


def _library(ctx: Any, server: FakeJudgeServer) -> None:
    parsed = read_dataset(demo_dir() / "datasets" / "qa.jsonl")
    ctx.library.datasets.create("qa", parsed.samples, format=parsed.format, source="qa.jsonl")
    EndpointRepository.of(ctx.library).save(model_endpoint_config("model-a", "scripted-model-a", server.port)
                                            .model_copy(update={"max_concurrency": 2}))


def make_view(qtbot, ctx) -> DatasetsView:  # type: ignore[no-untyped-def]
    view = DatasetsView(ctx)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    return view


def test_dialog_generates_and_the_dataset_opens_with_provenance(qtbot, ctx, server: GatedServer) -> None:  # type: ignore[no-untyped-def]
    server.gate = 10_000
    _library(ctx, server)
    view = make_view(qtbot, ctx)
    view.select_dataset("qa")
    dialog = view.open_generate()
    qtbot.addWidget(dialog)
    assert dialog.source.currentText() == "qa" and dialog.endpoint.currentText() == "model-a"
    assert dialog.name.text() == "qa-model-a" and "scripted-model-a" in dialog.model.placeholderText()
    dialog.limit.setValue(12)
    dialog.system.setPlainText("Answer in one word.")
    with qtbot.waitSignal(dialog.generated, timeout=WAIT_MS) as done:
        dialog.generate_button.click()
    assert done.args == ["qa-model-a"]
    assert dialog.generation.status == "complete" and dialog.generation.stored == 12
    # the outcome does not shadow QDialog.result(), the dialog's code (it was kept as ``result``)
    assert dialog.result() == QtWidgets.QDialog.DialogCode.Rejected
    assert "complete: 12 of 12 answers" in dialog.status.text()
    record = ctx.library.datasets.get("qa-model-a")
    assert record.provenance["parameters"]["system"] == "Answer in one word."
    # the new dataset is open, its provenance shown as plain text
    assert view.current_dataset().name == "qa-model-a"
    assert view.provenance.isVisible()
    text = view.provenance.text()
    assert "Generated from qa by endpoint model-a, model scripted-model-a" in text and "own system prompt" in text


def test_cancel_keeps_what_was_generated(qtbot, ctx, server: GatedServer) -> None:  # type: ignore[no-untyped-def]
    _library(ctx, server)
    view = make_view(qtbot, ctx)
    view.select_dataset("qa")
    dialog = view.open_generate()
    qtbot.addWidget(dialog)
    dialog.generate_button.click()
    assert dialog.cancel_button.isEnabled() and not dialog.generate_button.isEnabled()
    # the 7 free answers arrive and show as progress; the next calls wait at the server
    qtbot.waitUntil(lambda: dialog.progress.value() == 7 and server.seen >= 9, timeout=WAIT_MS)
    assert "7 of 60 answers" in dialog.status.text()
    with qtbot.waitSignal(dialog.generated, timeout=WAIT_MS):
        dialog.cancel_button.click()
        server.gate = 2  # the two calls in flight are answered (and kept); no further call starts
    assert dialog.generation.status == "cancelled"
    assert dialog.generation.stored == 9 and server.seen == 9
    record = ctx.library.datasets.get("qa-model-a")
    assert record.sample_count == 9 and record.provenance["status"] == "cancelled"
    assert [s.id for s in ctx.library.datasets.samples("qa-model-a")] == [f"qa-{n:03d}" for n in range(1, 10)]
    assert view.current_dataset().name == "qa-model-a" and "cancelled · 9 of 60 answers" in view.provenance.text()
    assert dialog.generate_button.isEnabled() and dialog.close_button.isEnabled()


def test_the_datasets_menu_opens_the_dialog(qtbot, ctx, window, server: GatedServer) -> None:  # type: ignore[no-untyped-def]
    _library(ctx, server)
    ctx.datasets_changed.emit()
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "Data&sets")
    action = next(a for a in menu.actions() if a.text() == "&Generate outputs…")
    action.trigger()
    assert window.tabs.currentWidget() is window.datasets_view
    dialog = window.datasets_view.generate_dialog
    assert dialog.isVisible() and dialog.endpoint.currentText() == "model-a"
