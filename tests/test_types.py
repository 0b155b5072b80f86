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


def _strict_flags() -> list[str]:
    """The config options ``mypy --strict`` turns on (each ``name = true``), read from this mypy's
    own ``--help``, so a mypy that adds a flag to strict adds it here."""
    text = subprocess.run([sys.executable, "-m", "mypy", "--help"], capture_output=True, text=True,
                          check=True).stdout
    section = re.search(r"Strict mode; enables the following flags:(.*?)\n  --", text, re.DOTALL)
    assert section is not None, text
    names = re.findall(r"--([a-z-]+)", re.sub(r"-\s*\n\s*", "-", section.group(1)))
    assert len(names) >= 10, names
    return [name.replace("-", "_") for name in names]


def test_the_core_is_checked_strictly() -> None:
    """Issue 45: studio/core is checked as ``mypy --strict`` would check it. Strict cannot be set
    per module, so pyproject's override for ``studio.core.*`` lists the flags; dropping the override
    or one of its flags fails here (the flags mypy sets only globally are in [tool.mypy])."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    core = [o for o in config.get("overrides", []) if "studio.core.*" in o["module"]]
    assert len(core) == 1, config.get("overrides")
    for option in _strict_flags():
        where = config if option in ("warn_unused_ignores", "warn_redundant_casts") else core[0]
        assert where.get(option) is True, f"{option} = true missing from the core's mypy config"


#: the few places a bare ``Any`` is the honest type, by file: how many uses and why
_ALLOWED_ANY: dict[str, tuple[int, str]] = {
    "studio/core/store/database.py": (4, "DriverRow and DriverConnection: a DB-API driver's rows, whose "
                                         "values sqlite3 and psycopg type as Any (read by position)"),
    "studio/core/store/postgres.py": (10, "the qmark cursor passes psycopg's overloaded execute/executemany "
                                          "arguments through untouched"),
    "studio/core/store/judge_cache.py": (1, "the dialect's own INSERT, chosen at run time (SQLite's and "
                                            "PostgreSQL's are two classes with the same upsert)"),
    "studio/core/engine/executors/ray_driver.py": (2, "a Ray actor handle: Ray's stubs type its methods "
                                                      "without the .remote the handle gives them"),
    "studio/core/platforms/_judge_runtime.py": (1, "embedded verbatim in exports (standard library only): "
                                                   "it names decoded JSON itself"),
    "studio/core/judges/handlebars.py": (1, "a compiled template node: a tuple whose fields depend on its kind"),
    "studio/core/store/results_query.py": (4, "the run summary's figures, filled in by layers above the "
                                              "store (engine/summary.py, the window), and the window's "
                                              "library handed through"),
}


def _any_uses(path: Path) -> int:
    """Uses of ``Any`` (``Any`` or ``typing.Any``) in a module's code and annotations; importing the
    name is not a use."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sum(1 for node in ast.walk(tree)
               if (isinstance(node, ast.Name) and node.id == "Any")
               or (isinstance(node, ast.Attribute) and node.attr == "Any"))


def test_any_only_at_decoded_json_boundaries() -> None:
    """Issue 45: ``Any`` in studio/core is decoded JSON, named once (``studio/core/json_types.py``);
    everything else has a concrete type, a Protocol, a TypeVar or ``object``."""
    found = {}
    for path in sorted((REPO / "studio" / "core").rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        if name == "studio/core/json_types.py":
            continue
        uses = _any_uses(path)
        allowed = _ALLOWED_ANY.get(name, (0, ""))[0]
        if uses > allowed:
            found[name] = uses
    assert not found, f"bare Any outside studio/core/json_types.py (use a JSON alias, a real type or object): {found}"


def test_the_any_check_sees_a_bare_any(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from typing import Any\nimport typing\n\ndef f(x: Any) -> typing.Any:\n    return x\n")
    assert _any_uses(module) == 2
