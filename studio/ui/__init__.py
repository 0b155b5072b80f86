"""The studio window (PySide6). Only this package imports Qt."""

from __future__ import annotations

from pathlib import Path


def launch(db_path: Path | str, *, serve_demo_judge: bool = False) -> int:
    import sys

    from .display import no_display_reason
    from .system_libs import missing_libraries, missing_libraries_message

    # both before Qt is imported, which would abort the process. No display first: its remedies
    # include QT_QPA_PLATFORM=offscreen, which needs none of the X11 libraries the next check names
    no_display = no_display_reason()
    if no_display:
        print(no_display, file=sys.stderr)
        return 1
    missing = missing_libraries()
    if missing:
        print(missing_libraries_message(missing), file=sys.stderr)
        return 1
    from .app import run_app

    return run_app(db_path, serve_demo_judge=serve_demo_judge)
