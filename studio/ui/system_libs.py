"""Qt's system libraries, checked before Qt is imported, so a missing one is a sentence, not "Aborted".

Qt's xcb platform plugin needs X11/xcb libraries that a minimal Linux install lacks; without them
``QApplication`` prints "could not load the Qt platform plugin xcb" and aborts the process. This
module reads the shared libraries PySide6's Qt GUI, Widgets and xcb plugin were linked against (the
ELF ``DT_NEEDED`` entries), tries to load each one that Qt does not ship itself, and names the
missing ones with the ``apt-get`` line that installs them. It imports nothing from Qt.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import struct
import sys
from pathlib import Path

#: dlopen()ed by the xcb plugin at start-up (Qt >= 6.5), so not in its DT_NEEDED list
RUNTIME_NEEDS = ("libxcb-cursor.so.0",)
#: the libraries a Debian/Ubuntu machine needs for the window (the README lists the same)
APT_PACKAGES = ("libegl1", "libgl1", "libfontconfig1", "libxkbcommon0", "libxkbcommon-x11-0", "libdbus-1-3",
                "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0",
                "libxcb-render-util0", "libxcb-randr0", "libxcb-shape0", "libxcb-xinerama0", "libxcb-xkb1",
                "libx11-xcb1")


def _needed(path: Path) -> list[str]:
    """The DT_NEEDED names of an ELF64 little-endian shared object (what ``ldd`` would resolve)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names: list[str] = []
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link][4]
        for pos in range(offset, offset + size, entsize or 16):
            tag, value = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                end = data.index(b"\0", strtab + value)
                names.append(data[strtab + value:end].decode())
    return names


def _qt_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt"


def apt_package(library: str) -> str:
    """Debian's package for a shared library: libxcb-icccm.so.4 -> libxcb-icccm4, libEGL.so.1 -> libegl1."""
    match = re.match(r"(lib.+?)\.so\.(\d+)", library)
    if match is None:
        return library
    stem, major = match.group(1).lower(), match.group(2)
    return f"{stem}-{major}" if stem[-1].isdigit() else f"{stem}{major}"


def _unloadable(name: str) -> str | None:
    """None when ``name`` loads; else the library really missing (``name`` or one it needs)."""
    try:
        ctypes.CDLL(name)
    except OSError as exc:
        match = re.match(r"(\S+?): cannot open shared object file", str(exc))
        return match.group(1) if match else name
    return None


def missing_libraries(qt_dir: Path | None = None, *, platform: str | None = None) -> list[str]:
    """The system libraries the window needs and this machine cannot load, in a stable order."""
    if not sys.platform.startswith("linux"):
        return []
    qt_dir = qt_dir or _qt_dir()
    if qt_dir is None:
        return []
    platform = platform if platform is not None else os.environ.get("QT_QPA_PLATFORM", "xcb")
    objects = [qt_dir / "lib" / "libQt6Gui.so.6", qt_dir / "lib" / "libQt6Widgets.so.6"]
    needs: list[str] = []
    if platform.split(":")[0] in ("", "xcb"):
        objects += [qt_dir / "plugins" / "platforms" / "libqxcb.so", qt_dir / "lib" / "libQt6XcbQpa.so.6"]
        needs += RUNTIME_NEEDS
    bundled = {p.name for p in (qt_dir / "lib").glob("*.so*")} if (qt_dir / "lib").is_dir() else set()
    for path in objects:
        if path.is_file():
            needs += _needed(path)
    wanted = [n for n in dict.fromkeys(needs) if n not in bundled and not n.startswith(("libQt6", "libpyside6"))]
    missing = (_unloadable(name) for name in wanted)
    return list(dict.fromkeys(name for name in missing if name is not None))


def missing_libraries_message(missing: list[str]) -> str:
    packages = " ".join(dict.fromkeys(apt_package(n) for n in missing))
    return (f"grader-studio: the window cannot start because Qt needs system libraries this machine lacks "
            f"({', '.join(missing)}); install them with `sudo apt-get install {packages}` (other systems: "
            "the same libraries from your package manager), or use the command line, which needs none.")
