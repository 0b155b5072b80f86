"""The core type-checks clean: mypy, configured in pyproject.toml ([tool.mypy], with pydantic's
plugin), runs on studio/core and any error fails the run. In the default suite because a cold run
takes about 30 s on this project (its cache, .mypy_cache, makes later runs a few seconds), and so a
change that breaks a type is caught where the rest of the change is tested."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_core_type_checks_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "studio/core"],
        capture_output=True, text=True, cwd=REPO,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # the summary names what was checked: a config that checked nothing would pass silently
    checked = re.search(r"Success: no issues found in (\d+) source files", result.stdout)
    assert checked is not None, output
    assert int(checked.group(1)) > 100, output
