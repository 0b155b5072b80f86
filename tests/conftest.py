"""Shared fixtures: a fresh library file per test, and the CLI run in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from studio.core.store import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "library.sqlite"


@pytest.fixture
def library(db_path: Path) -> Iterator[Library]:
    lib = Library.open(db_path)
    yield lib
    lib.close()


def run_cli(*args: str, db: Path | None = None, input: str | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a child process: exit codes and streams as a user sees them."""
    full_env = {**os.environ, **(env or {})}
    if db is not None:
        full_env["GRADER_STUDIO_DB"] = str(db)
    return subprocess.run([sys.executable, "-m", "studio", *args], capture_output=True, text=True,
                          input=input, env=full_env, timeout=timeout, cwd=REPO)


@pytest.fixture
def cli(db_path: Path):  # type: ignore[no-untyped-def]
    def invoke(*args: str, **kwargs):  # type: ignore[no-untyped-def]
        return run_cli(*args, db=db_path, **kwargs)

    return invoke
