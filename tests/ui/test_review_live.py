"""Other reviewers' progress on the Review page, through the window's live view (SQLite's
``data_version`` and PostgreSQL's NOTIFY on the queue tables, migration 0004)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.models import Sample
from studio.core.store import Library
from studio.ui.qt import QtCore


@pytest.fixture(params=["sqlite", "postgresql"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    return tmp_path / "library.sqlite" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
def window(qtbot: Any, qapp: Any, shared: Path | str, tmp_path: Path, messages: Any,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from studio.ui.context import AppContext
    from studio.ui.main_window import MainWindow

    monkeypatch.setenv("GRADER_STUDIO_USER", "bob")
    library = Library.open(shared)
    record = library.datasets.create("d", [Sample(id=f"s{i}", completion=str(i)) for i in range(4)])
    library.queues.create("q", record.id, [], {"rule": "random"}, [(f"s{i}", "") for i in range(4)],
                          labels_wanted=2, assignees=["ann", "bob"], leads=["lea"])
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    ctx = AppContext(library, shared, settings)
    win = MainWindow(ctx, messages, check_sandbox=False)  # type: ignore[arg-type]
    qtbot.addWidget(win)
    win.live.timer.stop()  # looks are driven by the test
    win.show()
    yield win
    ctx.tasks.settle()
    win.close()
    ctx.close()


def test_another_reviewers_labels_show_as_progress(window: Any, shared: Path | str) -> None:
    window.tabs.setCurrentWidget(window.review_tab)
    page = window.review_tab.page
    window.ctx.tasks.settle()
    assert "You (bob): 0 of 4 labelled · ann 0/4" in page.progress.text()
    window.live.look()  # what the window itself read is behind us
    with Library.open(shared) as other:
        other.queues.put_label("q", "s0", "PASS", reviewer="ann")
        other.queues.put_label("q", "s1", "FAIL", reviewer="ann")
    assert "queues" in window.live.look()
    window.ctx.tasks.settle()
    assert "ann 2/4" in page.progress.text()
    assert page.shown is not None and page.shown.item.others is None  # still blind to ann's labels
