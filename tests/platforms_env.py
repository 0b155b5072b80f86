"""Where .ci/platforms.sh installed the platforms' own packages, and what a test does without them.

A check that needs a platform package skips with the reason on a developer machine, and FAILS when
``STUDIO_REQUIRE_PLATFORMS=1`` (set by ``.ci/run`` whenever ``CI=true``): in CI a missing platform is
a broken build, never a silent skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PLATFORMS_DIR = Path(
    os.environ.get("STUDIO_PLATFORMS_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grader-studio" / "platforms"
)
VENV_BIN = PLATFORMS_DIR / "venv" / "bin"
VENV_PYTHON = VENV_BIN / "python"
NPM_MODULES = PLATFORMS_DIR / "npm" / "node_modules"
PROMPTFOO = NPM_MODULES / ".bin" / "promptfoo"
MISSING = "platform clients not installed: run .ci/platforms.sh (or set STUDIO_PLATFORMS_DIR)"


def required() -> bool:
    """True when a missing platform must fail the test (CI)."""
    return os.environ.get("STUDIO_REQUIRE_PLATFORMS", "") not in ("", "0") or os.environ.get("CI") == "true"


def unavailable(reason: str) -> None:
    """Skip, or fail when platforms are required: the one way a platform check gives up."""
    if required():
        pytest.fail(f"{reason} (STUDIO_REQUIRE_PLATFORMS/CI require every platform check to run)")
    pytest.skip(reason)


def env() -> dict[str, str]:
    return {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}


def needs_module(module: str) -> None:
    if not VENV_PYTHON.exists():
        unavailable(MISSING)
    probe = subprocess.run([str(VENV_PYTHON), "-c", f"import {module}"], capture_output=True, text=True,
                           timeout=120, env=env())
    if probe.returncode != 0:
        unavailable(f"{module} is not installed in {PLATFORMS_DIR}: {probe.stderr.strip()[-200:]}")


def needs_promptfoo() -> None:
    if not PROMPTFOO.exists() or shutil.which("node") is None:
        unavailable("promptfoo (npm) not installed: run .ci/platforms.sh")


def run_json(cmd: list[str], payload: Any, cwd: Path | None = None, timeout: float = 300) -> Any:
    """Run a platform-side script that reads JSON on stdin and writes JSON on stdout."""
    done = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env())
    assert done.returncode == 0, f"{cmd[-1]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last)


def needs_node() -> None:
    """javascript graders need Node.js: skipped without it on a developer machine, a failure in CI
    (``.ci/run`` installs nodejs)."""
    from studio.core.sandbox.node import find_node

    if find_node() is None:
        unavailable("node is not installed: javascript graders cannot run here")
