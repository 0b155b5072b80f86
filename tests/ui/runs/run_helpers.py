"""Helpers shared by the run tests (importable because pytest puts this folder on sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

from studio.core.models import Sample, Turn

SLOW_CHILD = Path(__file__).with_name("slow_child.py")


def math_samples(n: int) -> list[Sample]:
    """``n`` sums; every 4th completion is wrong, so exact_match scores 0.75."""
    return [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"What is {i} + {i}?")],
                   completion=str(2 * i if i % 4 else i + 1), expected=str(2 * i)) for i in range(n)]


def slow_child_command(db: Path) -> list[str]:
    """The run's child as ``slow_child.py``: small batches with a pause each, so a cancel lands mid-run."""
    return [sys.executable, str(SLOW_CHILD), "--db", str(db)]


