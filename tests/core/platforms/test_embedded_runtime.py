"""The judge runtime (``platforms/_judge_runtime.py``) is copied verbatim into exports and read by the
platform side, where no studio is installed: it must load with the standard library alone. A
typing pass once gave it a ``studio.core`` import, which only a platform's own eval run then caught."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import studio.core.platforms

RUNTIME = Path(studio.core.platforms.__file__).with_name("_judge_runtime.py")


def test_the_judge_runtime_loads_with_the_standard_library_alone(tmp_path: Path) -> None:
    # -I -S: no site-packages (so no studio), no current folder, no environment: what an export has
    loader = ("import types\n"
              "module = types.ModuleType('studio_judge_runtime')\n"
              f"exec(compile(open({str(RUNTIME)!r}, encoding='utf-8').read(), 'runtime', 'exec'), module.__dict__)\n"
              "print(sorted(name for name in ('fill', 'grade', 'parse_json_object') if hasattr(module, name)))\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", loader], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['fill', 'grade', 'parse_json_object']"
