"""Reports of a finished run for CI and reviewers: JUnit XML, a markdown summary, GitHub annotations.

Each module turns a run's sections (``engine/sections.py``) into one format; the CLI (``run``,
``runs report``) and the window only pick a file and write what these return.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from pydantic import BaseModel, ConfigDict

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


class Generated(BaseModel):
    """The generation a run's outputs came from (the CLI fills it from ``GenerationResult``)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    dataset: str
    stored: int
    endpoint: str | None = None
    model: str | None = None
    source_dataset: str | None = None
    calls: int = 0
    tokens: int = 0
    #: exact USD (None: the endpoint has no prices)
    cost: str | None = None

    def price(self) -> Fraction | None:
        return None if self.cost is None else Fraction(self.cost)
