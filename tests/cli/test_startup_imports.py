"""``grader-studio --help`` and ``--version`` import no command module (issue 32): their figure is in
bench/startup.py; this test lists the modules they import, so a heavy import that creeps back in
(SQLAlchemy, scipy, numpy, pydantic, the judges' HTTP client) fails here, not in a benchmark."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from studio.cli import COMMANDS, build_parser
from studio.cli.app import COMMAND_HELP

CHILD = """
import json, sys
from studio.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
HEAVY = ("sqlalchemy", "scipy", "numpy", "pydantic", "httpx", "aiohttp", "yaml", "ruamel", "PySide6")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_command_module(flag: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, flag], capture_output=True, text=True, timeout=60)
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    ours = [m for m in modules if m == "studio" or m.startswith("studio.")]
    # output: the guard every printed line passes (no workflow command smuggled in: docs/security.md)
    assert ours == ["studio", "studio.cli", "studio.cli.app", "studio.cli.listing", "studio.cli.output",
                    "studio.core", "studio.core.errors"]
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
    assert "run a grader or a suite" in done.stdout or flag == "--version"


def test_the_lean_help_lists_every_command_with_the_line_its_module_registers() -> None:
    def helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {action.dest: action.help for action in sub._choices_actions}

    full = helps(build_parser(None))  # every command module imported and registered
    assert full == helps(build_parser(["--help"])) == COMMAND_HELP
    assert set(full) == set(COMMANDS)
