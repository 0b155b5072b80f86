"""``grader-studio --help`` and ``--version`` import no command module (issue 32): their figure is in
bench/startup.py; this test lists the modules they import, so a heavy import that creeps back in
(SQLAlchemy, scipy, numpy, pydantic, the judges' HTTP client) fails here, not in a benchmark. A
one-sample judge run imports what grading with a judge needs and not the rest (the statistics, the
window, the platforms, the sandbox, the other kinds)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli import COMMANDS, build_parser
from studio.cli.app import COMMAND_HELP
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import files as definition_files
from studio.core.paths import demo_dir
from studio.core.store import Library

CHILD = """
import json, sys
from studio.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
# the modules imported (a None entry is a module blocked from importing: credentials._keyring)
print(json.dumps(sorted(name for name, module in sys.modules.items() if module is not None)), file=sys.stderr)
"""
#: the same, and what is imported (and which models are built) when the first judge call connects:
#: the first connection made from inside an event loop (the reachability check before is not)
AT_FIRST_CALL = """
import json, sys
seen = {}
def hook(event, args):
    asyncio = sys.modules.get("asyncio")
    if event == "socket.connect" and not seen and asyncio is not None and asyncio._get_running_loop() is not None:
        from pydantic import BaseModel
        def subclasses(cls):
            for sub in cls.__subclasses__():
                yield sub
                yield from subclasses(sub)
        seen["modules"] = sorted(name for name, module in sys.modules.items() if module is not None)
        seen["built"] = sorted({m.__name__ for m in subclasses(BaseModel) if m.__pydantic_complete__})
sys.addaudithook(hook)
""" + CHILD + """
print(json.dumps(seen), file=sys.stderr)
"""
HEAVY = ("sqlalchemy", "scipy", "numpy", "pydantic", "httpx", "aiohttp", "yaml", "ruamel", "PySide6")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_command_module(flag: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, flag], capture_output=True, text=True, timeout=60)
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    ours = [m for m in modules if m == "studio" or m.startswith("studio.")]
    # output: the guard every printed line passes (no workflow command smuggled in, no escape
    # sequence obeyed: docs/security.md), and outside, the stdlib-only boundary it shows text through
    # (grader_shapes: the lean listing's table of each kind's fields, plain data with no import)
    assert ours == ["studio", "studio.cli", "studio.cli.app", "studio.cli.grader_shapes", "studio.cli.listing",
                    "studio.cli.output", "studio.core", "studio.core.errors", "studio.core.outside"]
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
    assert "run a grader or a suite" in done.stdout or flag == "--version"


def test_the_lean_help_lists_every_command_with_the_line_its_module_registers() -> None:
    def helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {action.dest: action.help for action in sub._choices_actions}

    full = helps(build_parser(None))  # every command module imported and registered
    assert full == helps(build_parser(["--help"])) == COMMAND_HELP
    assert set(full) == set(COMMANDS)


def test_a_judge_run_imports_neither_the_window_nor_the_statistics_nor_the_other_kinds(library: Library,
                                                                                      db_path: Path) -> None:
    from judge_helpers import add_endpoint, qa

    library.datasets.create("qa", [qa("q1", "What is the capital of France?", "Paris", "Paris")])
    library.graders.create(definition_files.load(demo_dir() / "graders" / "qa-correctness-judge.grader.yaml"))
    with FakeJudgeServer() as server:
        add_endpoint(library, server, name="demo-scripted-judge")
        # no D-Bus session bus (a CI runner's, a server's): the keyring's SecretService can never be
        # reached, and SecretStorage (jeepney, cryptography) is not imported to find that out
        no_bus = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        done = subprocess.run([sys.executable, "-c", AT_FIRST_CALL, "--db", str(db_path), "run", "qa-correctness-judge",
                               "qa", "--limit", "1", "--no-cache"], capture_output=True, text=True, timeout=120,
                              env=no_bus)
    assert "samples 1/1  ok 1" in done.stdout, done.stdout + done.stderr
    modules = json.loads(done.stderr.strip().splitlines()[-2])
    at_call = json.loads(done.stderr.strip().splitlines()[-1])
    # before the first call: nothing only the summary, the reports or ``runs show`` need, no RE2 (its
    # first pattern imports it), no keyring macOS API looked for (ctypes' find_library runs ldconfig,
    # gcc and ld), and no validator built for a model the call does not validate (defer_build)
    assert not [m for m in at_call["modules"] if m.startswith((
        "studio.core.engine.sections", "studio.core.engine.summary",
        "studio.core.store.reports", "studio.core.store.results_query", "studio.core.spreadsheet",
        "studio.cli.run_report", "studio.cli.run_show", "re2", "ctypes.util"))]
    assert "studio.core.judges.http.transport" in at_call["modules"]
    assert not set(at_call["built"]) & {"Component", "CompositeGrader", "GraderSummary", "Verdict", "GraderCheck",
                                         "Label", "LabelInput", "LabelSet", "ChatResponse", "RenderedPrompt",
                                         "SuiteRecord", "SuiteVersionRecord"}
    assert {"BinaryJudge", "EndpointConfig"} <= set(at_call["built"])
    assert not [m for m in modules if m.split(".")[0] in ("scipy", "numpy", "PySide6", "shiboken6", "pyqtgraph")]
    left_out = ("studio.ui", "studio.core.platforms", "studio.core.sandbox", "studio.core.stats",
                "studio.core.datasets", "studio.core.demo", "sqlalchemy.dialects.postgresql", "sqlalchemy.orm",
                "alembic", "mako", "jinja2", "pygments", "httpx",  # no Alembic: the schema is current
                "secretstorage", "jeepney", "cryptography",
                # the other kinds' models (models/__init__.py names them lazily), the labels and the queues
                "studio.core.models.function", "studio.core.models.javascript", "studio.core.models.panels",
                "studio.core.models.rules", "studio.core.store.labels", "studio.core.store.queues")
    assert not [m for m in modules if m.startswith(left_out)]
    # its one kind, from the module named after it: not every kind (``kinds()``'s full scan)
    kinds = [m for m in modules if m.startswith(("studio.core.judges.kinds.", "studio.core.graders."))]
    assert [m for m in kinds if m.startswith("studio.core.judges.kinds.")] == ["studio.core.judges.kinds.binary_judge"]
    assert not [m for m in kinds if m.split(".")[-1] in ("bash", "function", "javascript", "builtin", "jury")]


#: the process's own command line (``main()``, as the console script and ``python -m studio`` call
#: it): the collector's state at the first judge call and after the command
GC_CHILD = """
import gc, json, sys
def collections():
    return sum(s["collections"] for s in gc.get_stats())
seen = {}
def hook(event, args):
    asyncio = sys.modules.get("asyncio")
    if event == "socket.connect" and "enabled" not in seen and asyncio is not None and asyncio._get_running_loop() is not None:
        loader = sys.modules.get("pydantic.plugin._loader")
        seen.update(enabled=gc.isenabled(), collections=collections() - before,
                    plugins_scanned=loader is not None and loader._plugins is not None)
sys.addaudithook(hook)
from studio.cli import main
before = collections()
code = main()
print(json.dumps({**seen, "code": code, "after": gc.isenabled(), "frozen_after": gc.get_freeze_count()}), file=sys.stderr)
"""


def test_start_up_runs_without_the_collector_and_the_run_has_it_back(library: Library, db_path: Path) -> None:
    """``main()`` pauses the cyclic collector for start-up (the imports' long-lived objects, traversed
    again and again as they grew: bench/README.md) and a run ends the pause before grading: at its
    first judge call the collector is on, with start-up's objects frozen out of its way."""
    from judge_helpers import add_endpoint, qa

    library.datasets.create("qa", [qa("q1", "What is the capital of France?", "Paris", "Paris")])
    library.graders.create(definition_files.load(demo_dir() / "graders" / "qa-correctness-judge.grader.yaml"))
    with FakeJudgeServer() as server:
        add_endpoint(library, server, name="demo-scripted-judge")
        done = subprocess.run([sys.executable, "-c", GC_CHILD, "--db", str(db_path), "run", "qa-correctness-judge",
                               "qa", "--limit", "1", "--no-cache"], capture_output=True, text=True, timeout=120)
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen["code"] == 0, done.stdout + done.stderr
    # from main() to the first call: 2 collections (after the pause), where the collector ran 183 times
    # (167 young, 15 middle, 1 full) with no pause; at the call it is on again, for the run's own work
    assert seen["collections"] < 20, seen
    assert seen["enabled"] is True and seen["after"] is True
    # no scan of every installed distribution for a pydantic plugin (the studio uses none; ~13 ms)
    assert seen["plugins_scanned"] is False, seen
    # any other command: the collector is back once its arguments are read
    listed = subprocess.run([sys.executable, "-c", GC_CHILD, "--db", str(db_path), "runs", "list"],
                            capture_output=True, text=True, timeout=120)
    seen = json.loads(listed.stderr.strip().splitlines()[-1])
    assert seen["code"] == 0 and seen["after"] is True and seen["frozen_after"] > 0, listed.stderr


def test_main_called_with_arguments_leaves_the_callers_collector_alone(db_path: Path) -> None:
    """A caller running ``main(argv)`` in its own process (the tests' in-process CLI) keeps its
    collector: nothing paused, nothing of its own frozen."""
    import gc

    from studio.cli import main

    frozen = gc.get_freeze_count()
    assert main(["--db", str(db_path), "runs", "list"]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
