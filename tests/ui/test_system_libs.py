"""A machine without Qt's system libraries gets one sentence naming them and the apt line, exit 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from studio.ui import system_libs

REAL_QT = system_libs._qt_dir()


def _qt_dir_missing(tmp_path: Path, real: str, fake: str) -> Path:
    """A copy of PySide6's xcb plugin whose DT_NEEDED names ``fake`` instead of ``real``."""
    assert REAL_QT is not None and len(real) == len(fake)
    plugin = REAL_QT / "plugins" / "platforms" / "libqxcb.so"
    data = plugin.read_bytes()
    assert real.encode() + b"\0" in data
    qt = tmp_path / "Qt"
    (qt / "plugins" / "platforms").mkdir(parents=True)
    (qt / "lib").mkdir()
    (qt / "plugins" / "platforms" / "libqxcb.so").write_bytes(data.replace(real.encode() + b"\0", fake.encode() + b"\0"))
    return qt


def test_the_needed_libraries_are_read_from_the_plugin() -> None:
    assert REAL_QT is not None
    needed = system_libs._needed(REAL_QT / "plugins" / "platforms" / "libqxcb.so")
    assert "libxcb-icccm.so.4" in needed and "libQt6XcbQpa.so.6" in needed


def test_a_missing_library_is_named_with_its_package(tmp_path: Path) -> None:
    qt = _qt_dir_missing(tmp_path, "libxcb-icccm.so.4", "libxcb-nopem.so.4")
    missing = system_libs.missing_libraries(qt, platform="xcb")
    assert "libxcb-nopem.so.4" in missing
    message = system_libs.missing_libraries_message(missing)
    assert "libxcb-nopem.so.4" in message and "apt-get install" in message and "libxcb-nopem4" in message
    assert "\n" not in message
    # offscreen needs no xcb plugin: nothing from it is asked for
    assert "libxcb-nopem.so.4" not in system_libs.missing_libraries(qt, platform="offscreen")


@pytest.mark.parametrize(("library", "package"), [
    ("libxcb-icccm.so.4", "libxcb-icccm4"), ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libEGL.so.1", "libegl1"), ("libdbus-1.so.3", "libdbus-1-3"), ("libxcb-cursor.so.0", "libxcb-cursor0"),
])
def test_apt_package_names(library: str, package: str) -> None:
    assert system_libs.apt_package(library) == package
    assert package in system_libs.APT_PACKAGES


def test_the_window_refuses_to_start_with_the_sentence(tmp_path: Path, monkeypatch: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from studio.cli import main

    qt = _qt_dir_missing(tmp_path, "libxcb-icccm.so.4", "libxcb-nokey.so.4")
    monkeypatch.setattr(system_libs, "_qt_dir", lambda: qt)
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setenv("DISPLAY", ":99")  # a display to open: the libraries are what stops the window
    assert main(["--db", str(tmp_path / "lib.sqlite")]) == 1
    err = capsys.readouterr().err
    assert "libxcb-nokey.so.4" in err and "sudo apt-get install" in err and "libxcb-nokey4" in err
    assert len(err.strip().splitlines()) == 1
