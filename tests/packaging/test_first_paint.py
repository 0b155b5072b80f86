"""The hook packaging/smoke uses to see the bundle's window paint: off unless the variable asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.ui import first_paint
from studio.ui.qt import QtWidgets


def test_the_window_saves_its_first_paint_when_asked(qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shot = tmp_path / "first.png"
    monkeypatch.setenv(first_paint.VARIABLE, str(shot))
    window = QtWidgets.QLabel("painted")
    window.resize(320, 200)
    qtbot.addWidget(window)
    codes: list[int] = []  # the real hook ends the event loop; here it must not end pytest-qt's
    first_paint.arm(window, quit_app=codes.append)
    window.show()
    qtbot.waitUntil(lambda: codes == [0], timeout=10_000)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 200


def test_nothing_is_installed_without_the_variable(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(first_paint.VARIABLE, raising=False)
    window = QtWidgets.QLabel("plain")
    qtbot.addWidget(window)
    first_paint.arm(window)
    assert window.findChildren(first_paint._FirstPaint) == []
