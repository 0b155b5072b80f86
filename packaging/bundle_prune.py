"""What the spec leaves out of the app's folder, and why.

PyInstaller collects every Qt plugin of the wheel and every library those plugins link to, the
machine's included. Some plugins cannot work in a desktop bundle at all (embedded-device back ends,
the GTK3 theme whose GTK3 is the system's own) or serve modules the app never imports (QtNetwork's
TLS), and Qt's own translations are never loaded (the studio installs no QTranslator). Of the rest,
``prune`` keeps what an extension module, a plugin or the interpreter needs, following DT_NEEDED
links; the machine's libraries only when Python's side needs them (the standard library's OpenSSL,
SQLite ...), not when only Qt does (X11/xcb, GLib, fontconfig, D-Bus: what the pip-installed app
takes from the machine, the README's apt-get line), and never the C++ runtime.
``packaging/build`` prints what remains.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Iterable

#: files (destination paths in the bundle, glob patterns) the app never uses
UNUSED = (
    "PySide6/Qt/translations/*",                     # Qt's own strings in other languages: no QTranslator
    "PySide6/Qt/plugins/platformthemes/libqgtk3.so",  # needs the system's GTK3; xdg-desktop-portal stays
    "PySide6/Qt/plugins/platforms/libqeglfs.so",     # embedded devices without a window system
    "PySide6/Qt/plugins/platforms/libqlinuxfb.so",
    "PySide6/Qt/plugins/platforms/libqvnc.so",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay.so",
    "PySide6/Qt/plugins/platforms/libqminimalegl.so",
    "PySide6/Qt/plugins/egldeviceintegrations/*",
    "PySide6/Qt/plugins/generic/*",                  # evdev/tslib input for the eglfs/linuxfb back ends
    "PySide6/Qt/plugins/tls/*",                      # QtNetwork's TLS: the studio talks HTTP with aiohttp and httpx
    "PySide6/Qt/plugins/networkinformation/*",
)
#: directories whose libraries are the machine's own
SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")
#: Qt's part of the bundle: what it needs from the machine (X11/xcb, GL, fontconfig, D-Bus, GLib, the
#: C++ runtime) the pip-installed app needs too, and the README's system packages bring it
QT_PARTS = ("PySide6/", "shiboken6/")
#: the C++ runtime: manylinux wheels (numpy, scipy, PySide6) never ship it, they take the machine's,
#: as the pip-installed app does
MACHINE_RUNTIME = ("libstdc++.so.6", "libgcc_s.so.1")


def _needed(path: str) -> list[str]:
    """DT_NEEDED names of a shared object (``readelf -d``; binutils is there: PyInstaller strips with it)."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=False).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


def _unused(dest: str) -> bool:
    return any(fnmatch.fnmatch(dest, pattern) for pattern in UNUSED)


def _is_root(dest: str) -> bool:
    """Loaded by Python or by Qt by path (extension modules, plugins, the interpreter), not as a
    dependency of another library."""
    name = os.path.basename(dest)
    return (".cpython-" in name or name.endswith(".abi3.so") or "/lib-dynload/" in dest
            or dest.startswith("PySide6/Qt/plugins/") or name.startswith("libpython"))


def prune(binaries: Iterable[tuple[str, str, str]], datas: Iterable[tuple[str, str, str]],
          ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], list[str]]:
    """(binaries, datas) without the unused files and without the libraries no extension module,
    plugin or interpreter needs; libraries of the machine are kept only when Python's side needs
    them (the standard library's libssl, libsqlite3 ...), not when only Qt does. The third item
    names what was left out."""
    binaries, datas = list(binaries), list(datas)
    dropped = [d for d, _s, _t in binaries + datas if _unused(d)]
    binaries = [e for e in binaries if not _unused(e[0])]
    datas = [e for e in datas if not _unused(e[0])]
    by_name: dict[str, tuple[str, str]] = {}
    for dest, src, _t in binaries:
        by_name.setdefault(os.path.basename(dest), (dest, src))
    system = {d for d, s, _t in binaries if os.path.realpath(s).startswith(SYSTEM_DIRS) and not _is_root(d)}
    machine = {d for d in system if os.path.basename(d) in MACHINE_RUNTIME}
    keep: set[str] = set()
    # (destination, reached from Qt only): Qt's own libraries are followed, the machine's are not
    todo = [(d, d.startswith(QT_PARTS)) for d, _s, _t in binaries if _is_root(d)]
    reached: dict[str, bool] = {}
    while todo:
        dest, qt_only = todo.pop()
        if dest in reached and (reached[dest] <= qt_only):
            continue
        reached[dest] = qt_only
        src = next(s for d, s, _t in binaries if d == dest)
        for name in _needed(src):
            if name not in by_name:
                continue
            dep = by_name[name][0]
            if dep in machine or (dep in system and qt_only):
                continue
            todo.append((dep, qt_only or dep.startswith(QT_PARTS)))
    keep = set(reached)
    gone = {d for d, _s, _t in binaries if d not in keep}
    dropped += sorted(gone)
    binaries = [e for e in binaries if e[0] in keep]
    # PyInstaller's top-level links to libraries kept in a package's folder (libQt6Core.so.6 ->
    # PySide6/Qt/lib/...): they go with their target
    datas = [e for e in datas if not (e[2] == "SYMLINK" and e[1] in gone)]
    return binaries, datas, dropped
