"""A team library's URL in the window (docs/security.md, "Library locations"): the title, the status
bar and every dialog show it with its password masked, a URL the studio does not read is refused
without creating a file, and a run's child process gets the URL through its environment, never
on its command line (read back from /proc/PID/cmdline while the child runs)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.models import BuiltinGrader, Sample
from studio.core.store import Library
from studio.ui.qt import QtCore

ENCODED = "s3cr%40t%3Apw%2Fx"  # the password s3cr@t:pw/x, percent-encoded
LEAKS = ("s3cr@t:pw/x", ENCODED, "s3cr", "pw/x")


def hidden(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text, (leak, text)


@pytest.fixture
def secret_url(pg_url: str) -> str:
    tail = pg_url.removeprefix("postgresql://postgres@")
    return f"postgresql://postgres:{ENCODED}@{tail}?sslpassword={ENCODED}"


@pytest.fixture
def server_window(qtbot: Any, qapp: Any, secret_url: str, tmp_path: Path, messages: Any) -> Iterator[Any]:
    from studio.ui.context import AppContext
    from studio.ui.main_window import MainWindow

    library = Library.open(secret_url)
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    ctx = AppContext(library, secret_url, settings)
    win = MainWindow(ctx, messages, check_sandbox=False)  # type: ignore[arg-type]
    qtbot.addWidget(win)
    win.show()
    yield win
    ctx.tasks.wait_idle()
    win.close()
    ctx.close()


def test_the_title_and_status_bar_show_the_url_masked(server_window: Any, pg_url: str) -> None:
    database = pg_url.rsplit("/", 1)[1]
    title = server_window.windowTitle()
    assert f"{database} on 127.0.0.1" in title
    hidden(title)
    tail = pg_url.removeprefix("postgresql://postgres@")
    assert server_window.library_label.text() == f"postgresql://postgres@{tail}?sslpassword=***"


@pytest.mark.skipif(sys.platform == "win32", reason="/proc and C:\\ paths")
def test_open_shared_library_refuses_in_a_masked_sentence_and_creates_nothing(
        qtbot: Any, server_window: Any, messages: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pg import free_port

    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    for url in (f"postgresql://alice:{ENCODED}@127.0.0.1:{free_port()}/team?password={ENCODED}",
                "postgresql://alice:s3cr@t:pw/x@127.0.0.1/team",
                f"postgresql+psycopg2://alice:{ENCODED}@127.0.0.1/team"):
        messages.text_answer = url
        assert server_window.choose_shared_library() is None
        title, sentence = messages.errors[-1]
        assert title == "Cannot open the library"
        hidden(sentence)
    assert len(messages.errors) == 3
    assert "cannot reach the library at postgresql://alice@127.0.0.1:" in messages.errors[0][1]
    assert "password=***" in messages.errors[0][1]
    assert messages.errors[1][1].startswith("cannot read the library URL postgresql://…: write a '@'")
    assert list(work.iterdir()) == []
    # the window's library is untouched
    assert server_window.ctx.library.is_server and server_window.isVisible()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_a_run_child_gets_the_url_in_its_environment_not_its_command_line(qtbot: Any, server_window: Any,
                                                                          secret_url: str) -> None:
    from studio.core.engine.runner import start_run
    from studio.ui.runs import RunWorker

    lib = server_window.ctx.library
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", [Sample(id=f"m{i}", completion=str(i), expected="1") for i in range(20)])
    run_id = start_run(lib, "exact", "math").id
    child = RunWorker(lib, run_id, db_path=server_window.ctx.db_path)
    seen: dict[str, bytes] = {}

    def read_proc() -> None:  # the child is still importing Python when it has just started
        pid = int(child.process.processId())
        seen["cmdline"] = Path(f"/proc/{pid}/cmdline").read_bytes()
        seen["environ"] = Path(f"/proc/{pid}/environ").read_bytes()

    child.process.started.connect(read_proc)
    with qtbot.waitSignal(child.completed, timeout=60_000) as done:
        child.start()
    assert done.args[0].status == "completed" and done.args[0].done == 20
    assert child.wait(5000)
    child.deleteLater()
    argv = seen["cmdline"].split(b"\0")
    assert b"run" in argv and b"--resume" in argv and b"--db" not in argv
    for leak in LEAKS:
        assert leak.encode() not in seen["cmdline"]
    assert b"GRADER_STUDIO_DB=" + secret_url.encode() in seen["environ"].split(b"\0")
