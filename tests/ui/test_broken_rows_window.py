"""The window on a library holding rows a teammate wrote that do not validate (tests/hostile_rows.py),
on SQLite and PostgreSQL: it starts, the sidebar lists the good graders and the broken ones apart (named,
plain text) with a Delete that works, and Settings > Endpoints shows each broken endpoint marked, its
sentence on selection, and removes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hostile_rows import AUTHOR, BAD_ENDPOINTS, BAD_GRADERS, break_rows

from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def test_the_window_starts_and_shows_broken_rows(qtbot: Any, app_ctx: Any, library: Library, messages: Any) -> None:
    from studio.ui.dialogs.settings import EndpointsPage
    from studio.ui.main_window import MainWindow

    break_rows(library)
    win = MainWindow(app_ctx, messages, check_sandbox=False)
    qtbot.addWidget(win)
    timer = getattr(win.live, "timer", None)
    if timer is not None:
        timer.stop()
    win.show()
    from studio.ui.library.panel import LibraryPanel

    panel = win.findChild(LibraryPanel)
    assert panel is not None and panel.model.index_of("good").isValid()
    shown = [panel.broken.item(n).text() for n in range(panel.broken.count())]
    assert len(shown) == len(BAD_GRADERS) and panel.broken.isVisibleTo(panel)
    for key in BAD_GRADERS:
        assert any(text.startswith(f"{key} v2 — ") for text in shown), shown
    assert AUTHOR in panel.broken.item(0).toolTip()
    panel.broken.setCurrentRow(0)
    doomed = panel.broken.currentItem().data(0x0100)
    panel.broken_delete.click()
    qtbot.waitUntil(lambda: panel.broken.count() == len(BAD_GRADERS) - 1)
    assert doomed in {e.handle for e in library.graders.listing(deleted_only=True)}  # in the Trash
    assert not messages.errors

    page = EndpointsPage(app_ctx, messages)
    qtbot.addWidget(page)
    items = [page.list.item(n).text() for n in range(page.list.count())]
    assert "good" in items and all(f"{name} (broken)" in items for name in BAD_ENDPOINTS)
    page.list.setCurrentRow(items.index("bad-url (broken)"))
    assert "bad-url" in page.result.text() and AUTHOR in page.result.text() and "broken" in page.result.text()
    page.remove_button.click()
    assert "bad-url (broken)" not in [page.list.item(n).text() for n in range(page.list.count())]
    assert "bad-url" not in {e.ident for e in library.endpoints.broken()}
    assert not messages.errors
    app_ctx.tasks.settle()
    messages.unsaved_answer = "discard"
    win.close()
