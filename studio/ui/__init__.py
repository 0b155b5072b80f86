"""The studio window (PySide6). Only this package imports Qt."""

from __future__ import annotations

from pathlib import Path


def launch(db_path: Path, *, serve_demo_judge: bool = False) -> int:
    import sys

    from .display import no_display_reason
    from .system_libs import missing_libraries, missing_libraries_message

    missing = missing_libraries()  # before Qt is imported: Qt itself would abort the process
    if missing:
        print(missing_libraries_message(missing), file=sys.stderr)
        return 1
    no_display = no_display_reason()  # likewise: Qt would abort, blaming a library that is installed
    if no_display:
        print(no_display, file=sys.stderr)
        return 1
    from .app import run_app

    return run_app(db_path, serve_demo_judge=serve_demo_judge)
