"""File ▸ Export ▸ Share run as HTML (issue 47): the run shown, written by a child process while the
window goes on; the page it writes is the CLI's (tests/cli/test_viewer_html.py checks the page)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from studio.core.models import BuiltinGrader, Sample, Turn
from studio.ui.qt import Qt
from tests.conftest import run_main


def _action(window: Any, text: str) -> Any:
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        for action in menu.actions() if menu is not None else []:
            inner = action.menu()
            for sub in inner.actions() if inner is not None else []:
                if sub.text() == text:
                    return sub
    raise AssertionError(f"no menu action {text!r}")


def test_share_as_html_writes_the_run_shown_without_blocking(window: Any, ctx: Any, qtbot: Any,
                                                             monkeypatch: Any, tmp_path: Path) -> None:
    ctx.library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    ctx.library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"q{i}")],
                                             completion=f"a{i % 2}", expected="a1") for i in range(6)])
    ran = run_main("run", "exact", "d", "--json", db=ctx.db_path)
    run_id = json.loads(ran.stdout)["id"]
    target = tmp_path / "shared.html"
    monkeypatch.setattr("studio.ui.file_dialogs.save_file", lambda *args, **kwargs: str(target))
    action = _action(window, "Share run as &HTML…")

    action.trigger()  # no run shown yet: a sentence, no file
    assert "Open a run" in window.statusBar().currentMessage() and not target.exists()

    window.run_panel.open_run(run_id)
    action.trigger()
    sharing = window.sharing
    assert sharing.is_running()  # the slot returned while the child writes: the window is free
    with qtbot.waitSignal(sharing.done, timeout=120_000) as done:
        pass
    assert done.args == [str(target)]
    text = target.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="studio-data">(.*?)</script>', text, re.S).group(1))
    assert data["kind"] == "run" and data["header"]["id"] == run_id and data["n"] == 6
    assert f"Wrote run {run_id}" in window.statusBar().currentMessage()


def test_a_failed_share_is_a_sentence(window: Any, ctx: Any, qtbot: Any, messages: Any, monkeypatch: Any,
                                      tmp_path: Path) -> None:
    ctx.library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    ctx.library.datasets.create("d", [Sample(id="s0", messages=[Turn(role="user", content="q")], completion="a")])
    run_id = json.loads(run_main("run", "exact", "d", "--json", db=ctx.db_path).stdout)["id"]
    missing = tmp_path / "no such folder" / "x.html"
    monkeypatch.setattr("studio.ui.file_dialogs.save_file", lambda *args, **kwargs: str(missing))
    window.run_panel.open_run(run_id)
    _action(window, "Share run as &HTML…").trigger()
    with qtbot.waitSignal(window.sharing.failed, timeout=120_000) as failed:
        pass
    assert "cannot write" in failed.args[0] and "Traceback" not in failed.args[0]
    assert not missing.exists()


def _two_runs(ctx: Any) -> tuple[int, int]:
    ctx.library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    ctx.library.graders.create(BuiltinGrader(key="contains", function="contains"))
    answers = ["a1", "a1 and more", "b", "a1", "it is a1", "c"]
    ctx.library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"q{i}")],
                                             completion=text, expected="a1") for i, text in enumerate(answers)])
    a = json.loads(run_main("run", "exact", "d", "--json", db=ctx.db_path).stdout)["id"]
    b = json.loads(run_main("run", "contains", "d", "--json", db=ctx.db_path).stdout)["id"]
    return a, b


def test_share_a_comparison_as_html_from_the_compare_tab(window: Any, ctx: Any, qtbot: Any, monkeypatch: Any,
                                                          tmp_path: Path) -> None:
    a, b = _two_runs(ctx)
    target = tmp_path / "compared.html"
    monkeypatch.setattr("studio.ui.file_dialogs.save_file", lambda *args, **kwargs: str(target))
    view = window.compare_view
    assert not view.share.isEnabled()  # nothing compared yet: nothing to share
    view.compare_runs(a, b)
    ctx.tasks.settle()
    assert view.report is not None and view.share.isEnabled()
    view.share.click()
    sharing = view.sharing
    assert sharing.is_running()  # the slot returned while the child writes: the window is free
    assert sharing.arguments() == ["runs", "compare", str(a), str(b), "--html", "-o", str(target)]
    with qtbot.waitSignal(sharing.done, timeout=120_000) as done:
        pass
    assert done.args == [str(target)]
    text = target.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="studio-data">(.*?)</script>', text, re.S).group(1))
    assert data["kind"] == "compare" and [h["id"] for h in data["headers"]] == [a, b]
    # the page's flips are the comparison's the tab shows: two answers contain a1 without being it
    assert data["change"].count("improvement") == len(view.report["flips"]) == 2
    assert f"Wrote the comparison of runs {a} and {b}" in view.share_status.text()
    assert view.share_status.textFormat() == Qt.TextFormat.PlainText


def test_closing_the_window_cancels_a_comparison_being_shared(window: Any, ctx: Any, qtbot: Any, monkeypatch: Any,
                                                               tmp_path: Path) -> None:
    a, b = _two_runs(ctx)
    target = tmp_path / "never.html"
    monkeypatch.setattr("studio.ui.file_dialogs.save_file", lambda *args, **kwargs: str(target))
    view = window.compare_view
    view.compare_runs(a, b)
    ctx.tasks.settle()
    sharing = view.share_html()
    assert sharing.is_running()
    window.close()
    assert sharing.cancelled and not sharing.is_running()
    assert not target.exists() and list(tmp_path.glob("never*")) == []  # no half-written page
