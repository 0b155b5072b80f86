"""The core never imports Qt: it runs headless, in CI and under the CLI."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import studio.core


def test_core_imports_without_qt() -> None:
    modules = [m.name for m in pkgutil.walk_packages(studio.core.__path__, "studio.core.")
               if ".sandbox.shims" not in m.name and not m.name.endswith("__main__")]
    code = (
        "import sys, importlib\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('PySide6', 'shiboken6', 'PyQt5', 'PyQt6'):\n"
        "            raise ImportError('Qt is not allowed in studio.core: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('ok', len(sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
