"""``grader-studio import``: a file cut short is refused with its line and nothing is created;
``--key`` names the grader of a HUD module and of an Inspect file as it does every platform's, and a
file of several graders refuses it with a sentence (exit 2) instead of ignoring it (issue 43)."""

from __future__ import annotations

import json
from pathlib import Path

from studio.core.models import parse_grader
from studio.core.platforms import get_platform

CONTAINS = parse_grader({"kind": "builtin", "key": "contains-b", "function": "contains", "name": "Contains B"})


def graders(cli) -> list[str]:  # type: ignore[no-untyped-def]
    listed = cli("graders", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return sorted(g["key"] for g in json.loads(listed.stdout))


def exported(platform: str, folder: Path) -> Path:
    [(relative, text)] = get_platform(platform).export(CONTAINS).files.items()
    path = folder / relative
    path.write_text(text, encoding="utf-8")
    return path


def test_a_cut_file_is_refused_with_its_line_and_nothing_is_created(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    whole = exported("openai", tmp_path)
    text = whole.read_text(encoding="utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    for extra in ([], ["--from", "openai"]):
        result = cli("import", str(cut), *extra)
        assert result.returncode == 1, result
        assert f"{cut}:" in result.stderr and "not valid JSON" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    letta = exported("letta", tmp_path)
    cut_yaml = tmp_path / "cut.yaml"
    cut_yaml.write_text(letta.read_text(encoding="utf-8").rstrip("\n")[:-3], encoding="utf-8")
    result = cli("import", str(cut_yaml))
    assert result.returncode == 1 and "ends in the middle of a line" in result.stderr, result
    assert graders(cli) == []


def test_key_renames_a_hud_module_and_an_inspect_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for platform, key in (("hud", "from-hud"), ("inspect", "from-inspect")):
        path = exported(platform, tmp_path)
        result = cli("import", str(path), "--key", key)
        assert result.returncode == 0, result
        assert f"created {key} (builtin)" in result.stdout, result.stdout
        shown = json.loads(cli("graders", "show", key, "--json").stdout)
        # the definition the module carries, under the key given
        definition = shown["definition"]
        assert (definition["key"], definition["name"], definition["function"]) == (key, "Contains B", "contains")
    assert graders(cli) == ["from-hud", "from-inspect"]


def test_key_with_a_file_of_several_graders_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    task = tmp_path / "task.py"
    task.write_text("from inspect_ai.scorer import exact, includes\n\nSCORERS = [includes(), exact()]\n",
                    encoding="utf-8")
    result = cli("import", str(task), "--key", "mine")
    assert result.returncode == 2, result
    assert "the key 'mine' names one grader, but task.py holds 2 (task-includes, task-exact)" in result.stderr
    assert graders(cli) == []
    assert cli("import", str(task)).returncode == 0  # without the key: both, as before
    assert graders(cli) == ["task-exact", "task-includes"]
