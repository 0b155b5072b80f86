"""The live view (docs/team.md): a grader, a suite, a run or a label another process writes shows
in an open window without a click, on SQLite and on PostgreSQL, keeping the selection and the
open grader's unsaved edits; a save from a stale version is refused and offers both side by side.

Each look (every 0.5 s, ``live.INTERVAL_MS``) sees every change committed before it: the tests call
one look after the other process has exited and check what it refreshed (no timing in the
asserts), and one test leaves it to the window's own timer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.models import BuiltinGrader, FunctionGrader, Sample
from studio.core.models import files as definition_files
from studio.core.models.labels import LabelInput
from studio.core.store import Library
from studio.ui import live
from studio.ui.qt import QtCore
from tests.conftest import run_cli

SOURCE = "async def grade(thread):\n    return 1.0\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    return tmp_path / "library.sqlite" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
def team_window(qtbot: Any, qapp: Any, shared: Path | str, tmp_path: Path, messages: Any) -> Iterator[Any]:
    from studio.ui.context import AppContext
    from studio.ui.main_window import MainWindow

    library = Library.open(shared)
    library.graders.create(FunctionGrader(key="mine", name="Mine", source=SOURCE))
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    ctx = AppContext(library, shared, settings)
    win = MainWindow(ctx, messages, check_sandbox=False)  # type: ignore[arg-type]
    qtbot.addWidget(win)
    win.show()
    yield win
    ctx.tasks.wait_idle()
    messages.unsaved_answer = "discard"
    win.close()
    ctx.close()


def _cli(db: Path | str, tmp_path: Path, *args: str, user: str = "bob") -> None:
    result = run_cli(*args, db=db, env={"GRADER_STUDIO_USER": user})  # type: ignore[arg-type]
    assert result.returncode == 0, result.stderr


def _grader_file(tmp_path: Path, key: str) -> str:
    return str(definition_files.save(BuiltinGrader(key=key, function="exact_match"), tmp_path / f"{key}.grader.yaml"))


def test_a_cli_created_grader_shows_keeping_selection_and_unsaved_edits(
        team_window: Any, shared: Path | str, tmp_path: Path) -> None:
    window = team_window
    assert live.INTERVAL_MS <= 1000  # a look at least every second: a change shows within two
    window.open_grader("mine")
    window.page.body.editor.setPlainText(SOURCE.replace("1.0", "0.5"))
    assert window.page.is_dirty()
    window.live.look()  # what the window itself wrote is behind us
    _cli(shared, tmp_path, "graders", "create", _grader_file(tmp_path, "theirs"))
    assert "graders" in window.live.look()
    assert window.library.model.index_of("theirs").isValid()
    assert window.library.current_record().key == "mine"
    assert window.page.key == "mine" and window.page.is_dirty()
    assert "0.5" in window.page.body.editor.toPlainText()


def test_suites_runs_and_labels_by_others_show(team_window: Any, shared: Path | str, tmp_path: Path) -> None:
    window = team_window
    with Library.open(shared) as other:
        other.datasets.create("qa", [Sample(id="q0", completion="x")])
    window.live.look()
    _cli(shared, tmp_path, "suites", "create", "their-suite", "mine")
    _cli(shared, tmp_path, "run", "mine", "qa")
    changed = window.live.look()
    assert {"suites", "runs"} <= changed
    keys = [window.suites_page.suites.item(n).text() for n in range(window.suites_page.suites.count())]
    assert "their-suite" in keys
    with Library.open(shared) as other:
        other.labels.put("qa", LabelInput(sample_id="q0", verdict="PASS"))
    assert "labels" in window.live.look()


def test_the_windows_own_timer_shows_a_cli_grader(qtbot: Any, team_window: Any, shared: Path | str,
                                                  tmp_path: Path) -> None:
    window = team_window
    assert window.live.timer.isActive() and window.live.timer.interval() == live.INTERVAL_MS
    _cli(shared, tmp_path, "graders", "create", _grader_file(tmp_path, "by-timer"))
    qtbot.waitUntil(lambda: window.library.model.index_of("by-timer").isValid(), timeout=30_000)


def test_a_stale_save_is_refused_with_both_side_by_side_and_nothing_lost(
        team_window: Any, shared: Path | str, messages: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    window = team_window
    monkeypatch.setenv("GRADER_STUDIO_USER", "alice")
    window.open_grader("mine")
    window.page.body.editor.setPlainText(SOURCE.replace("1.0", "0.25"))
    with Library.open(shared) as other:  # bob saves v2 meanwhile
        monkeypatch.setenv("GRADER_STUDIO_USER", "bob")
        other.graders.save(FunctionGrader(key="mine", name="Mine", source=SOURCE.replace("1.0", "0.75")))
        monkeypatch.setenv("GRADER_STUDIO_USER", "alice")
    window.live.look()  # the window learns of v2; the unsaved edits stay
    assert window.page.is_dirty()
    assert not window.page.save()
    assert messages.asked[-1] == "Cannot save: a newer version is stored"
    diff = window.grader_actions.diff_view
    assert diff.left_title.text() == "v2 by bob (stored)" and "0.75" in diff.text(0)
    assert diff.right_title.text().startswith("Your edits (from v1") and "0.25" in diff.text(1)
    window.grader_actions.stale_dialog.close()
    assert [v.author for v in window.ctx.library.graders.versions("mine")][-1] == "bob"
    assert window.page.is_dirty() and "0.25" in window.page.body.editor.toPlainText()


def test_another_analysts_lock_is_named_and_forced_only_after_asking(
        team_window: Any, messages: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    window = team_window
    monkeypatch.setenv("GRADER_STUDIO_USER", "alice")
    window.ctx.library.graders.set_locked("mine", True)
    monkeypatch.setenv("GRADER_STUDIO_USER", "bob")
    window.live.look()
    window.open_grader("mine")
    assert "locked by alice since" in window.page.subtitle.text()
    messages.confirm_answer = False
    assert not window.grader_actions.set_locked("mine", False)
    assert messages.asked[-1] == "Unlock another analyst's grader?"
    assert window.ctx.library.graders.get("mine").locked
    messages.confirm_answer = True
    assert window.grader_actions.set_locked("mine", False)
    assert window.ctx.library.graders.versions("mine")[-1].action == "force-unlock"


def test_the_versions_dialog_names_each_versions_author(team_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    window = team_window
    monkeypatch.setenv("GRADER_STUDIO_USER", "carol")
    window.ctx.library.graders.save(FunctionGrader(key="mine", name="Mine", source=SOURCE.replace("1.0", "0.9")))
    dialog = window.grader_actions.show_versions("mine")
    authors = [dialog.list.topLevelItem(n).text(2) for n in range(dialog.list.topLevelItemCount())]
    assert authors[0] == "carol"  # newest first
    dialog.close()


def test_a_run_the_window_starts_grades_in_a_child_on_either_backend(qtbot: Any, team_window: Any) -> None:
    """The child gets a server URL through its environment: never on its command line, where a
    password in the URL would show in every process list."""
    from studio.core.engine.runner import start_run
    from studio.ui.runs import RunWorker, worker

    assert "--db" not in worker.child_command("postgresql://alice:s3cret@127.0.0.1:5432/team")
    lib = team_window.ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", [Sample(id=f"m{i}", completion=str(i), expected="1") for i in range(50)])
    run_id = start_run(lib, "exact", "math").id
    child = RunWorker(lib, run_id, db_path=team_window.ctx.db_path)
    with qtbot.waitSignal(child.completed, timeout=60_000) as done:
        child.start()
    assert done.args[0].status == "completed" and done.args[0].done == 50
    assert child.wait(5000)
    child.deleteLater()


def test_file_open_shared_library_opens_a_server_library_and_refuses_a_down_one(
        qtbot: Any, window: Any, messages: Any, pg_url: str) -> None:
    from pg import free_port

    messages.text_answer = f"postgresql://alice:s3cret@127.0.0.1:{free_port()}/team"
    assert window.choose_shared_library() is None
    title, sentence = messages.errors[-1]
    assert title == "Cannot open the library" and "cannot reach the library at postgresql://alice@127.0.0.1:" in sentence
    assert "s3cret" not in sentence
    messages.text_answer = pg_url
    opened = window.choose_shared_library()
    assert opened is not None
    qtbot.addWidget(opened)
    assert opened.ctx.library.is_server and opened.library_label.text() == pg_url
    assert " on 127.0.0.1" in opened.windowTitle()
    opened.close()
