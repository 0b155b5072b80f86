"""An application context on a fresh library per test; background tasks drained before teardown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.store import Library
from studio.ui.context import AppContext
from studio.ui.qt import QtCore


@pytest.fixture
def app_ctx(qapp, library: Library, db_path: Path, tmp_path: Path) -> Iterator[AppContext]:  # type: ignore[no-untyped-def]
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    ctx = AppContext(library, db_path, settings=settings)
    yield ctx
    ctx.tasks.wait_idle()
    qapp.processEvents()
