"""What the bundle's sandbox worker executable holds: its entry, the guest code, and the standard
library a grader may import.

In the pip-installed app a worker is the host Python with its site-packages hidden, so a grader
imports the standard library and the studio's stand-ins (``adaptive_harmony``, ``letta_evals``) and
nothing else. The standalone app has no host Python: ``grader-studio.spec`` builds a second, small
executable from the same ``worker_main.py`` whose archive holds exactly this list, so a grader sees
the same modules there. ``tests/test_packaging.py`` checks that every module a worker imports is in it.
"""

from __future__ import annotations

import importlib.util
import os
import pkgutil
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUEST = ROOT / "studio" / "core" / "sandbox" / "guest"
SHIMS = GUEST / "shims"
ENTRY = GUEST / "worker_main.py"
#: where the guest's own packages are found at build time (what worker_main.py puts on sys.path)
PATHS = [str(SHIMS), str(GUEST)]
NAME = "grader-studio-worker"

#: standard-library parts left out of the worker: the interpreter's own test suite and test
#: extensions, the Tk GUI (a grader has no display), and the installers of pip and of 2to3
EXCLUDED = frozenset({
    "test", "idlelib", "tkinter", "_tkinter", "turtle", "turtledemo", "ensurepip", "lib2to3",
    "_testcapi", "_testbuffer", "_testinternalcapi", "_testmultiphase", "_testimportmultiple",
    "_testclinic", "_xxtestfuzz", "_ctypes_test", "xxlimited", "xxlimited_35", "__phello__",
})
_TEST_PARTS = frozenset({"test", "tests", "idle_test"})


def guest_modules() -> list[str]:
    """Every module of the guest package and the shims, by name (``studio_guest.loop`` ...)."""
    names: list[str] = []
    for base in (GUEST, SHIMS):
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if base == GUEST and rel.parts[0] in ("shims", "worker_main.py", "__init__.py"):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if parts:
                names.append(".".join(parts))
    return names


def _stdlib_dir() -> str:
    return sysconfig.get_paths()["stdlib"]


def stdlib_modules() -> list[str]:
    """The standard library of the building interpreter (top-level modules and every submodule of
    its packages) minus ``EXCLUDED``; modules of other platforms (``winreg``) are not there."""
    found: set[str] = set()
    for name in sorted(sys.stdlib_module_names):
        if name in EXCLUDED or name in sys.builtin_module_names:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        found.add(name)
        if spec.submodule_search_locations:
            for info in pkgutil.walk_packages(list(spec.submodule_search_locations), prefix=name + ".",
                                              onerror=lambda _name: None):
                if not _TEST_PARTS.intersection(info.name.split(".")):
                    found.add(info.name)
    return sorted(found)


def hidden_imports() -> list[str]:
    """What the worker's Analysis is told to collect besides what its entry imports."""
    return guest_modules() + stdlib_modules()


def available() -> frozenset[str]:
    """Every module a worker of the bundle can import: built into the interpreter or collected."""
    return frozenset(sys.builtin_module_names) | frozenset(hidden_imports())


if __name__ == "__main__":  # `python packaging/worker_modules.py`: the list, one a line
    sys.stdout.write(os.linesep.join(hidden_imports()) + os.linesep)
