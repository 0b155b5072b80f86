"""Starting the window: the library, the application context, the theme, and (for the demo) the
scripted judge served in-process on 127.0.0.1:8765 for as long as the window is open."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .qt import QtCore, QtGui, QtWidgets

if TYPE_CHECKING:
    from studio.core.demo.fake_http import FakeServerBase

    from .context import AppContext


def start_demo_servers() -> tuple[list[FakeServerBase], list[str]]:
    """The fake judge (and reward server) the demo library points at; problems come back as text."""
    servers: list[FakeServerBase] = []
    problems: list[str] = []
    from studio.core.demo import DEMO_JUDGE_PORT, DEMO_REWARD_PORT
    from studio.core.demo.fake_server import FakeJudgeServer, FakeRewardServer

    for cls, port in ((FakeJudgeServer, DEMO_JUDGE_PORT), (FakeRewardServer, DEMO_REWARD_PORT)):
        try:
            servers.append(cls(port=port).start())
        except OSError as exc:
            problems.append(f"cannot serve the demo {cls.__name__} on port {port}: {exc.strerror or exc}")
    return servers, problems


def shut_down(ctx: AppContext, servers: list[FakeServerBase]) -> None:
    """After the window: stop the demo servers, close the context, and end the sandbox workers."""
    for server in servers:
        server.stop()
    ctx.close()
    from studio.core.sandbox.pool import close_shared_pool

    close_shared_pool()


def run_app(db_path: Path | str, *, serve_demo_judge: bool = False) -> int:
    from studio.core.store import Library

    from .context import AppContext
    from .main_window import APP_NAME, MainWindow
    from .theme import apply_theme

    QtCore.QCoreApplication.setOrganizationName("grader-studio")
    QtCore.QCoreApplication.setApplicationName("grader-studio")
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv)
    assert isinstance(app, QtWidgets.QApplication)
    app.setApplicationDisplayName(APP_NAME)  # Qt appends it to every window title
    font = app.font()
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
        app.setFont(font)
    try:
        library = Library.open(db_path)
    except Exception as exc:  # unreadable file, newer schema, disk full: a sentence, then exit
        from studio.core.store.location import display
        from studio.core.urls import scrub

        QtWidgets.QMessageBox.critical(None, "Cannot open the library",
                                       f"{display(db_path)}\n\n{scrub(str(exc), db_path)}")
        return 1
    ctx = AppContext(library, db_path)
    apply_theme(app, str(ctx.settings.value("ui/theme", "light")))
    servers: list[FakeServerBase] = []
    problems: list[str] = []
    if serve_demo_judge:
        servers, problems = start_demo_servers()
    window = MainWindow(ctx)
    window.setWindowIcon(QtGui.QIcon())
    from .first_paint import arm

    arm(window)  # GRADER_STUDIO_FIRST_PAINT: packaging/smoke's screenshot and start-up timing
    window.show()
    for problem in problems:
        window.say(problem)
    try:
        return app.exec()
    finally:
        shut_down(ctx, servers)
