"""pytest-qt for the window: offscreen, Qt warnings fail a test, and so does background work left running.

Message boxes never block: the window's ``Messages`` is replaced by ``FakeMessages``, which records
what would have been shown and answers questions as the test says.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen:"):  # a screen size of its own is kept
    os.environ["QT_QPA_PLATFORM"] = "offscreen"

from studio.core.store import Library  # noqa: E402
from studio.ui import tasks as ui_tasks  # noqa: E402
from studio.ui.qt import QtCore, QThreadPool  # noqa: E402

# harmless notes of the offscreen platform plugin, not problems of the studio
QT_LOG_IGNORE = ["This plugin does not support", "propagateSizeHints"]

_UI_ROOT = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _UI_ROOT in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*QT_LOG_IGNORE))


_POOLS: weakref.WeakSet[Any] = weakref.WeakSet()
_original_init = ui_tasks.TaskManager.__init__


def _tracking_init(self: Any, *args: Any, **kwargs: Any) -> None:
    _original_init(self, *args, **kwargs)
    _POOLS.add(self)


ui_tasks.TaskManager.__init__ = _tracking_init  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _no_leftover_work(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves thread-pool work running (it would race the next test)."""
    yield
    busy = []
    pools = [("global pool", QThreadPool.globalInstance())]
    for manager in list(_POOLS):
        try:
            pools.append(("TaskManager pool", manager.pool))
        except RuntimeError:  # already deleted with its context
            continue
    for name, pool in pools:
        try:
            active = pool.activeThreadCount()
        except RuntimeError:
            continue
        if active:
            busy.append(f"{name}: {active} running")
            pool.waitForDone(10_000)
    if busy:
        pytest.fail("background work left running at the end of the test: " + "; ".join(busy))


class FakeMessages:
    """Records messages instead of showing boxes; answers come from the attributes below."""

    def __init__(self) -> None:
        self.parent = None
        self.errors: list[tuple[str, str]] = []
        self.infos: list[tuple[str, str]] = []
        self.confirm_answer = True
        self.unsaved_answer = "discard"
        self.text_answer: str | None = None
        self.int_answer: int | None = None
        self.directory: str | None = None
        self.file: str | None = None
        self.edits_answer = "save"
        self.asked: list[str] = []
        self.questions: list[tuple[str, str]] = []  # each confirm's title and text
        self.approve_answer = False
        self.approvals: list[Any] = []  # the Pending each approval dialog was shown

    def error(self, title: str, error: BaseException | str) -> None:
        from studio.ui.messages import describe_error

        self.errors.append((title, error if isinstance(error, str) else describe_error(error)))

    def info(self, title: str, text: str) -> None:
        self.infos.append((title, text))

    def confirm(self, title: str, text: str, action: str = "OK", *, safe_default: bool = False) -> bool:
        self.asked.append(title)
        self.questions.append((title, text))
        return self.confirm_answer

    def ask_unsaved(self, name: str) -> str:
        self.asked.append(f"unsaved {name}")
        return self.unsaved_answer

    def ask_text(self, title: str, label: str, text: str = "") -> str | None:
        return self.text_answer if self.text_answer is not None else text

    def ask_int(self, title: str, label: str, value: int, low: int, high: int) -> int | None:
        return self.int_answer

    def choose_directory(self, title: str) -> str | None:
        return self.directory

    def ask_use_edits(self, name: str, action: str) -> str:
        self.asked.append(f"use edits {name} {action}")
        return self.edits_answer

    def choose_file(self, title: str, filters: str = "") -> str | None:
        return self.file

    def approve_endpoint(self, held: Any) -> bool:
        self.approvals.append(held)
        return self.approve_answer

    def choose_new_file(self, title: str, filters: str = "") -> str | None:
        return self.file


@pytest.fixture
def messages() -> FakeMessages:
    return FakeMessages()


@pytest.fixture
def ctx(qapp: Any, tmp_path: Path) -> Iterator[Any]:
    from studio.ui.context import AppContext

    db = tmp_path / "library.sqlite"
    library = Library.open(db)
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    context = AppContext(library, db, settings)
    yield context
    context.close()


@pytest.fixture
def app_ctx(qapp: Any, library: Library, db_path: Path, tmp_path: Path) -> Iterator[Any]:
    """An application context on the test's fresh library; background tasks drained before teardown."""
    from studio.ui.context import AppContext

    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    context = AppContext(library, db_path, settings=settings)
    yield context
    context.tasks.settle()  # every task, and every task a finished task's callback started


@pytest.fixture
def window(qtbot: Any, ctx: Any, messages: FakeMessages) -> Iterator[Any]:
    from studio.ui.main_window import MainWindow

    win = MainWindow(ctx, messages, check_sandbox=False)  # type: ignore[arg-type]
    qtbot.addWidget(win)
    # the live view's timer is stopped here: these tests write to the library behind the window's back
    # (as another analyst would), and a look landing mid-test on a loaded machine would reload the open
    # grader under the test's hands; tests/ui/test_live_view.py drives it with look() and its own timer
    timer = getattr(win.live, "timer", None)
    if timer is not None:
        timer.stop()
    win.resize(1400, 880)
    win.show()
    yield win
    ctx.tasks.settle()
    messages.unsaved_answer = "discard"
    win.close()
