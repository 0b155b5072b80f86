"""Every store test runs on both backends: a SQLite file and a real PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db
