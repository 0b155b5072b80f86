"""Every file written for a user goes through ``studio/core/safe_files.py`` (a new file renamed over
the target, never through a link): the writers that did not (CI reports, suite files, the window's
report export) do now, and a scan of ``studio/`` fails on any other ``write_text``, ``write_bytes``
or ``open`` for writing."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from studio.core.models import BuiltinGrader
from studio.core.store import Library

STUDIO = Path(__file__).resolve().parents[2] / "studio"

#: writes that are not a user's file, each with why (path relative to studio/, the call as unparsed)
ALLOWED = {
    ("core/safe_files.py", "os.open(temp, flags, mode)"): "the one writer itself (mode: 0o666, or 0o600 for a bug report)",
    ("core/safe_files.py", "os.open(name, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow else _NOFOLLOW))"):
        "the one reader of files a user names (open_regular): read-only (a link refused where asked)",
    ("cli/__init__.py", "open(os.devnull, 'w')"): "silences stdout after a broken pipe",
    ("core/engine/reports/markdown.py", "path.open('a', encoding='utf-8')"):
        "appends to $GITHUB_STEP_SUMMARY, the file GitHub's runner names for it (append is its contract)",
    ("core/judges/http/local_server.py", "open(self.log, 'ab')"): "the studio's own llama.cpp server log",
    ("core/sandbox/guest/node_main.py", "os.open(os.devnull, os.O_RDWR)"): "inside the sandbox: /dev/null",
    ("core/sandbox/guest/studio_guest/loop.py", "os.open(os.devnull, os.O_RDWR)"): "inside the sandbox: /dev/null",
    ("core/sandbox/guest/studio_guest/node_confine.py", "os.open(path, _O_PATH | _O_CLOEXEC)"):
        "inside the sandbox: an O_PATH handle, never written",
}


def _mode(call: ast.Call, position: int) -> object:
    for keyword in call.keywords:
        if keyword.arg == "mode":
            return keyword.value.value if isinstance(keyword.value, ast.Constant) else "?"
    if len(call.args) > position:
        arg = call.args[position]
        return arg.value if isinstance(arg, ast.Constant) else "?"
    return None


def writes(path: Path) -> list[tuple[str, str]]:
    """(file, call) of each call in ``path`` that may write a file outside safe_files."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in {"write_text", "write_bytes"}:
            suspicious = not (isinstance(func.value, ast.Name) and func.value.id == "safe_files")
        elif isinstance(func, ast.Attribute) and func.attr == "open":
            module = func.value.id if isinstance(func.value, ast.Name) else ""
            if module == "os":
                suspicious = True  # flags decide: every os.open is listed
            else:  # io.open/codecs.open(file, mode) or a Path's .open(mode); Library.open(path) is not a file
                mode = _mode(node, 1 if module in {"io", "codecs", "gzip", "bz2", "lzma"} else 0)
                suspicious = isinstance(mode, str) and mode != "?" and bool(set(mode) & set("wax+"))
        elif isinstance(func, ast.Name) and func.id == "open":
            mode = _mode(node, 1)
            suspicious = mode == "?" or (isinstance(mode, str) and bool(set(mode) & set("wax+")))
        else:
            continue
        if suspicious:
            found.append((str(path.relative_to(STUDIO)), ast.unparse(node)))
    return found


def test_no_file_is_written_outside_safe_files() -> None:
    found = {hit for path in sorted(STUDIO.rglob("*.py")) for hit in writes(path)}
    assert sorted(found - set(ALLOWED)) == []
    assert sorted(set(ALLOWED) - found) == []  # the list holds no stale entry


def test_the_scan_sees_each_way_of_writing(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from pathlib import Path\nimport io\nPath('x').write_text('a')\nopen('x', 'w')\n"
                      "open('x', mode='ab')\nPath('x').open('w')\nio.open('x', 'x')\nopen('x')\n"
                      "safe_files.write_text('x', 'a')\nwrite_text('x', 'a')\n")
    global STUDIO
    saved, STUDIO = STUDIO, tmp_path
    try:
        calls = [call for _, call in writes(sample)]
    finally:
        STUDIO = saved
    assert calls == ["Path('x').write_text('a')", "open('x', 'w')", "open('x', mode='ab')", "Path('x').open('w')",
                     "io.open('x', 'x')"]


def test_ci_reports_and_suite_files_refuse_a_planted_link(cli, library: Library, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from judge_helpers import qa

    library.graders.create(BuiltinGrader(key="em", function="exact_match"))
    library.datasets.create("d", [qa("s", "q", "a", "a")])
    library.close()
    assert cli("suites", "create", "s", "em").returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for name in ("report.xml", "report.md", "suite.yaml"):
        (tmp_path / name).symlink_to(victim)
    ran = cli("run", "em", "d", "--json", "--junit", str(tmp_path / "report.xml"))
    assert "symbolic link" in ran.stderr and "Traceback" not in ran.stderr, ran
    ran = cli("run", "em", "d", "--json", "--markdown", str(tmp_path / "report.md"))
    assert "symbolic link" in ran.stderr and "Traceback" not in ran.stderr, ran
    exported = cli("suites", "export", "s", "-o", str(tmp_path / "suite.yaml"))
    assert exported.returncode == 1 and "symbolic link" in exported.stderr, exported
    assert victim.read_text() == "precious\n"
    written = cli("run", "em", "d", "--json", "--junit", str(tmp_path / "fresh.xml"))
    assert written.returncode == 0 and json.loads(written.stdout)["id"]
    assert "<testsuite" in (tmp_path / "fresh.xml").read_text()
