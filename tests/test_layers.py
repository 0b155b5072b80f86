"""Imports only go down the layers, and the core never imports Qt (it runs headless, in CI and
under the CLI). Both are import-linter contracts in pyproject.toml; this runs them on every test run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--no-cache"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout, result.stdout
