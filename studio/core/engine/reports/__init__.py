"""Reports of a finished run for CI and reviewers: JUnit XML, a markdown summary, GitHub annotations.

Each module turns a run's sections (``engine/sections.py``) into one format; the CLI (``run``,
``runs report``) and the window only pick a file and write what these return.
"""

from __future__ import annotations

from pathlib import Path

from studio.core.errors import StudioError


class ReportPathError(StudioError, ValueError):
    """A report path that cannot be written (its folder is missing, or it is a folder)."""


def check_report_path(path: str | Path, option: str) -> Path:
    """Refuse, before any run exists, a report that could not be written afterwards."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise ReportPathError(f"{option} {str(path)!r} is a folder; give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ReportPathError(f"{option} {str(path)!r}: the folder {str(parent)!r} does not exist")
    return target
