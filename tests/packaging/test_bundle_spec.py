"""The standalone bundle's spec and the sandbox worker stay in step, without building the bundle.

Building and smoke-testing the bundle is one command (``packaging/build && packaging/smoke``,
docs/release.md) kept out of the test run for its time. These checks catch, at every test run, the
drift that would break it: a module the worker imports that the spec does not collect (a grader would
fail in the bundle only), and names the spec, the build script and the launcher must agree on.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox import launch
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"


def _load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"packaging_{name}", PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


worker_modules = _load("worker_modules")


def _type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports_of(path: Path, package: str) -> set[str]:
    """Every module ``path`` imports, at top level or inside functions (relative ones resolved);
    not what an ``if TYPE_CHECKING:`` block names for the type checker, which never runs."""
    names: set[str] = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _type_checking(node.test):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if package else ""
                module = ".".join(p for p in (base, node.module or "") if p)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names
                         if f"{module}.{alias.name}" in worker_modules.guest_modules())
    return {n for n in names if n}


def test_every_module_the_guest_code_imports_is_collected_for_the_worker() -> None:
    available = worker_modules.available()
    missing: dict[str, set[str]] = {}
    for base in (worker_modules.GUEST, worker_modules.SHIMS):
        for path in base.rglob("*.py"):
            rel = path.relative_to(base)
            if base == worker_modules.GUEST and rel.parts[0] == "shims":
                continue
            parts = list(rel.with_suffix("").parts)
            package = ".".join(parts[:-1] if parts[-1] != "__init__" else parts[:-1])
            wanted = _imports_of(path, package)
            absent = {n for n in wanted if n not in available}
            if absent:
                missing[str(rel)] = absent
    assert not missing, f"imported by the worker but not collected by the spec: {missing}"


def test_the_worker_list_holds_the_guest_the_shims_and_the_standard_library() -> None:
    names = set(worker_modules.hidden_imports())
    assert {"studio_guest.loop", "studio_guest.confine", "adaptive_harmony", "letta_evals.models"} <= names
    assert {"json", "asyncio", "ctypes", "resource", "decimal", "statistics", "xml.etree.ElementTree",
            "email.mime.text", "sqlite3", "unittest.mock"} <= names
    assert not {n for n in names if n.split(".")[0] in worker_modules.EXCLUDED}
    assert not any(n.startswith(("studio.", "numpy", "pydantic")) or n == "studio" for n in names)


LOADED = """
import sys

def _loaded():
    # each module by its own name (os.path is posixpath), when the import system loaded it
    return ",".join(sorted({m.__spec__.name for m in list(sys.modules.values())
                            if getattr(m, "__spec__", None) is not None}))
"""
REPORTERS = {
    # a grader that imports asyncio runs on a real event loop (the loop's other path)
    "promptfoo": LOADED + "\nimport asyncio\n\nasync def get_assert(output, context):\n"
                          "    await asyncio.sleep(0)\n"
                          "    return {'pass': True, 'score': 1.0, 'reason': _loaded()}\n",
    "letta": LOADED + "\nfrom letta_evals.decorators import grader\nfrom letta_evals.models import GradeResult\n\n"
                      "@grader\nasync def check(sample, submission):\n"
                      "    return GradeResult(score=1.0, rationale=_loaded())\n",
}


@pytest.mark.parametrize("contract", sorted(REPORTERS))
def test_every_module_loaded_in_a_real_worker_is_collected_for_the_worker(contract: str) -> None:
    """A grader reports the modules its sandbox worker has loaded (the loop, the contract's payload,
    asyncio for an async entry, the shims); the bundle's worker must hold each of them."""
    sample = Sample(id="s", messages=[Turn(role="user", content="q")], completion="a", expected="a")
    pool = WorkerPool(size=1)
    try:
        grader = FunctionGrader(key="k", source=REPORTERS[contract], contract=contract, timeout_seconds=10)  # type: ignore[arg-type]
        scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": pool}))
        try:
            (outcome,) = scorer.score_sync([sample])
        finally:
            scorer.close()
    finally:
        pool.close()
    assert outcome.status == "ok", outcome.error
    loaded = set((outcome.rationale or "").split(","))
    assert {"studio_guest.loop", "studio_guest.confine"} <= loaded
    assert ("asyncio.base_events" if contract == "promptfoo" else "letta_evals.models") in loaded
    assert loaded - worker_modules.available() == set()


def _spec_calls(name: str) -> list[ast.Call]:
    tree = ast.parse((PACKAGING / "grader-studio.spec").read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def test_the_spec_builds_the_worker_from_the_module_list() -> None:
    analyses = _spec_calls("Analysis")
    worker = [a for a in analyses if "worker_modules.ENTRY" in ast.unparse(a.args[0])]
    assert len(worker) == 1, "one Analysis of worker_main.py"
    keywords = {k.arg: ast.unparse(k.value) for k in worker[0].keywords}
    assert keywords["hiddenimports"] == "worker_modules.hidden_imports()"
    assert keywords["pathex"] == "worker_modules.PATHS"
    assert worker_modules.ENTRY == launch.GUEST_DIR / "worker_main.py"
    assert set(worker_modules.PATHS) == {str(launch.GUEST_DIR), str(launch.GUEST_DIR / "shims")}


def test_the_spec_the_build_and_the_launcher_agree_on_the_worker_executable() -> None:
    names = {ast.unparse(k.value) for call in _spec_calls("EXE") for k in call.keywords if k.arg == "name"}
    assert "worker_modules.NAME" in names
    assert launch.FROZEN_WORKER.name == worker_modules.NAME
    build = (PACKAGING / "build").read_text()
    assert f"mv dist/{worker_modules.NAME} dist/grader-studio/{launch.FROZEN_WORKER.parent}" in build


def test_a_frozen_studio_runs_the_bundled_worker_inside_bubblewrap(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """No system Python: the worker is the bundle's executable, its folder bound read-only."""
    app = tmp_path / "opt" / "grader-studio"
    worker = app / launch.FROZEN_WORKER
    worker.parent.mkdir(parents=True)
    worker.write_bytes(b"")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(app / "grader-studio"))
    launch._runtime.cache_clear()
    try:
        plan = launch.plan_worker(launch.SandboxSettings(mode="bubblewrap"), probe=True)
        argv = plan.argv
        binds = [argv[i + 1:i + 3] for i, a in enumerate(argv) if a == "--ro-bind"]
        assert [str(worker.parent), str(worker.parent)] in binds
        assert argv[-2] == str(worker) and argv[-1].startswith("{")
        assert not any("python" in a for a in argv[argv.index(str(worker)):])
        limits = launch.plan_worker(launch.SandboxSettings(mode="limits_only", allow_unsandboxed=True), probe=True)
        assert limits.argv[0] == str(worker) and len(limits.argv) == 2
    finally:
        launch._runtime.cache_clear()
        launch.ensure_bytecode.cache_clear()  # skipped while frozen: compile the guest next time


def test_an_extra_the_bundle_leaves_out_is_named_with_its_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.core.paths import extra_hint

    monkeypatch.delattr(sys, "frozen", raising=False)
    assert extra_hint("Ray", "ray", "grade on a Ray cluster") == (
        "Ray is not installed here: install the extra with  pip install 'grader-studio[ray]'  to grade on a "
        "Ray cluster.")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    hint = extra_hint("Ray", "ray", "grade on a Ray cluster")
    assert "not part of the standalone app" in hint and "pip install 'grader-studio[ray]'" in hint


def test_the_version_is_written_in_one_place(cli) -> None:  # type: ignore[no-untyped-def]
    import studio

    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"grader-studio {studio.__version__}"
    assert 'dynamic = ["version"]' in (REPO / "pyproject.toml").read_text()


def test_the_fallback_builds_its_root_away_from_an_app_unpacked_under_tmp() -> None:
    """The namespaces fallback mounts a tmpfs where it builds the sandbox's root: never over the
    runtime or the guest (a bundle unpacked in /tmp), which it must still bind from the host."""
    assert launch._staging_dir("/root/.pyenv/versions/3.11.7", "/work/studio/guest") == "/tmp"
    staging = launch._staging_dir("/tmp/app/worker", "/tmp/app/_internal/studio/core/sandbox/guest")
    assert staging != "/tmp" and os.path.isdir(staging)
    assert "R=\"$5\"" in launch._CHROOT_SCRIPT and "shift 6" in launch._CHROOT_SCRIPT  # $6: the allowed packages


def test_every_source_file_the_studio_reads_at_run_time_ships_as_a_file() -> None:
    """A module read as text (``Path(__file__).with_name("x.py").read_text()``: the judge exports
    embed the judge runtime) exists only compiled inside the bundle's archive unless the spec adds it
    as a data file; the export would then fail in the bundle only."""
    read: set[str] = set()
    for path in (REPO / "studio").rglob("*.py"):
        if "sandbox" in path.parts and "guest" in path.parts:
            continue  # the guest folder ships whole
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "with_name"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and str(node.args[0].value).endswith(".py")):
                assert path.parent == REPO / "studio" / "core" / "platforms", f"{path}: extend the spec's SOURCES_READ"
                read.add(str(node.args[0].value))
    assert read, "no module reads a sibling source: update this test"
    spec = (PACKAGING / "grader-studio.spec").read_text()
    listed = ast.literal_eval(spec.split("SOURCES_READ = ", 1)[1].split("\n", 1)[0])
    assert read <= set(listed)
    assert all((REPO / "studio" / "core" / "platforms" / name).is_file() for name in listed)
