"""The studio type-checks clean: mypy, configured in pyproject.toml ([tool.mypy], with pydantic's
plugin), runs over all of studio/ (core, engine, store, cli and the window) and any error fails the
run. In the default suite so that a change that breaks a type is caught where the rest of the change
is tested.

Its cost: a cold run is ~16 s of CPU (2.4 min of wall at load 10 on two cores); with mypy's cache
(``.mypy_cache`` in the checkout, which ``.ci/run``'s own ``mypy studio`` then reuses) a few seconds.
Marked ``early``: the suite starts it first (tests/conftest.py), so on its own worker it overlaps
the rest of the suite instead of being the last file a worker waits for."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.early
@pytest.mark.timeout(900)  # a cold cache under a loaded machine: minutes, not the suite's 120 s
def test_studio_type_checks_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--cache-dir", str(REPO / ".mypy_cache"),
         "studio"],
        capture_output=True, text=True, cwd=REPO,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # the summary names what was checked: a config that checked nothing, or only the core, would pass silently
    checked = re.search(r"Success: no issues found in (\d+) source files", result.stdout)
    assert checked is not None, output
    assert int(checked.group(1)) > 300, output
