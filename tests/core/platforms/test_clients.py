"""What we export loads in the platforms' own client packages (installed by .ci/platforms.sh).

The clients live in a venv of their own so the app's dependencies stay lean; each test skips with
the reason when its client is missing. All the clients install on Python 3.11 today (adaptive-sdk,
meetkai-mka1, letta-evals, openai, hud, inspect-ai; promptfoo from npm).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from platform_graders import every_kind
from platforms_env import unavailable

from studio.core.models.files import load as load_definition
from studio.core.platforms import ExportResult, get_platform

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[2] / "resources" / "demo" / "graders"
PLATFORMS_DIR = Path(
    os.environ.get("STUDIO_PLATFORMS_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grader-studio" / "platforms"
)
VENV_BIN = PLATFORMS_DIR / "venv" / "bin"
PROMPTFOO = PLATFORMS_DIR / "npm" / "node_modules" / ".bin" / "promptfoo"
MISSING = "platform clients not installed: run .ci/platforms.sh (or set STUDIO_PLATFORMS_DIR)"


def graders():  # type: ignore[no-untyped-def]
    found = every_kind()
    if DEMO.is_dir():
        found += [load_definition(p) for p in sorted(DEMO.glob("*.grader.yaml"))]
    return found


def export_all(name: str, root: Path) -> ExportResult:
    platform = get_platform(name)
    result = ExportResult()
    for grader in graders():
        if platform.can_export(grader).ok:
            for rel, text in platform.export(grader).files.items():
                (root / name / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / name / rel).write_text(text, encoding="utf-8")
                result.files[rel] = text
    return result


def has(tool: str) -> bool:
    return (VENV_BIN / tool).exists()


def run(cmd: list[str], cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "INSPECT_LOG_DIR": str(cwd or HERE)}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def needs(module: str) -> None:
    if not has("python"):
        unavailable(MISSING)
    probe = run([str(VENV_BIN / "python"), "-c", f"import {module}"])
    if probe.returncode != 0:
        unavailable(f"{module} is not installed in {PLATFORMS_DIR}: {probe.stderr.strip()[-200:]}")


@pytest.mark.parametrize(
    ("name", "module"),
    [("adaptive", "adaptive_sdk"), ("mka1", "mka1"), ("openai", "openai"), ("hud", "hud.graders"),
     ("inspect", "inspect_ai")],
)
def test_exports_load_in_python_clients(name: str, module: str, tmp_path: Path) -> None:
    needs(module)
    result = export_all(name, tmp_path)
    assert result.files
    done = run([str(VENV_BIN / "python"), str(HERE / "check_with_clients.py"), str(tmp_path / name)], timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "checked 0 files" not in done.stdout


def test_letta_suite_validates(tmp_path: Path) -> None:
    if not has("letta-evals"):
        unavailable(MISSING)
    result = get_platform("letta").export_many(graders())
    for rel, text in result.files.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    done = run([str(VENV_BIN / "letta-evals"), "validate", str(tmp_path / "suite.yaml")], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is valid" in done.stdout


def test_inspect_lists_the_exported_tasks(tmp_path: Path) -> None:
    if not has("inspect"):
        unavailable(MISSING)
    result = export_all("inspect", tmp_path)
    files = sorted(result.files)
    done = run([str(VENV_BIN / "inspect"), "list", "tasks", *files], cwd=tmp_path / "inspect", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    for rel in result.files:
        assert rel.removesuffix("_inspect.py") + "_task" in done.stdout, done.stdout


def test_promptfoo_config_validates(tmp_path: Path) -> None:
    if not PROMPTFOO.exists() or shutil.which("node") is None:
        unavailable("promptfoo (npm) not installed: run .ci/platforms.sh")
    result = get_platform("promptfoo").export_many(graders())
    for rel, text in result.files.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    done = run([str(PROMPTFOO), "validate", "-c", "promptfooconfig.yaml"], cwd=tmp_path)
    assert done.returncode == 0 and "Configuration is valid" in done.stdout, done.stdout + done.stderr
    # ``validate`` does not check assertion types; promptfoo's own schema does
    from studio.core.platforms._fields import load_yaml_text

    asserts = load_yaml_text(result.files["promptfooconfig.yaml"], "config")["defaultTest"]["assert"]
    (tmp_path / "asserts.json").write_text(json.dumps(asserts))
    index = PLATFORMS_DIR / "npm" / "node_modules" / "promptfoo" / "dist" / "src" / "index.js"
    script = (
        f"const pf = await import({json.dumps(str(index))});"
        "const fs = await import('node:fs');"
        "const items = JSON.parse(fs.readFileSync('asserts.json', 'utf8'));"
        "let bad = 0;"
        "for (const a of items) { const r = pf.AssertionOrSetSchema.safeParse(a);"
        "  if (!r.success) { bad++; console.log('REJECTED', JSON.stringify(a).slice(0, 200), r.error.message); } }"
        "console.log('checked', items.length); process.exit(bad ? 1 : 0);"
    )
    done = run(["node", "--input-type=module", "-e", script], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
