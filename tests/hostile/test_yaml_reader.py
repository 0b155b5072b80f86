"""One YAML reader for every YAML the studio reads: an alias bomb is refused everywhere, with its line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from studio.core.platforms._base import PlatformError
from studio.core.platforms._fields import load_yaml_text, peek_yaml
from studio.core.yaml_text import MAX_ALIASED_NODES, YamlRefused, read_yaml

STUDIO = Path(__file__).resolve().parents[2] / "studio"

#: nine nested nine-fold anchors: 9**9 = 387 million strings in about one kilobyte
LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))

PROMPTFOO_BOMB = ("prompts: ['{{input}}']\nproviders: [echo]\n"
                  "tests:\n  - vars: {input: hi}\n    assert:\n      - type: contains\n        value: hi\n"
                  "defaultTest:\n  vars:\n" + "".join("    " + line + "\n" for line in LAUGHS.splitlines()))


def test_a_promptfoo_alias_bomb_is_refused_with_its_line() -> None:
    with pytest.raises(PlatformError) as caught:
        load_yaml_text(PROMPTFOO_BOMB, "promptfooconfig.yaml")
    message = str(caught.value)
    assert message.startswith("promptfooconfig.yaml:")
    assert f"repeat more than {MAX_ALIASED_NODES:,} nodes" in message


def test_detection_refuses_a_bomb_with_its_sentence(tmp_path: Path) -> None:
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(PROMPTFOO_BOMB)
    with pytest.raises(PlatformError, match="billion laughs"):
        peek_yaml(path)


def test_a_shared_default_block_still_reads() -> None:
    text = "defaults: &d {threshold: 0.5, weight: 2}\none: *d\ntwo: {<<: *d, weight: 3}\n"
    data = read_yaml(text, "x.yaml", aliases=True)
    assert data["one"] == {"threshold": 0.5, "weight": 2} and data["two"]["weight"] == 3


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(YamlRefused) as caught:
        read_yaml("a: &a [1, *a]\n", "loop.yaml", aliases=True)
    assert caught.value.line == 1 and "refers to a node that contains it" in str(caught.value)


def test_the_cli_import_refuses_the_bomb_at_once(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(PROMPTFOO_BOMB)
    for extra in ((), ("--from", "promptfoo")):
        result = cli("import", str(path), "--dry-run", *extra, timeout=60)
        assert result.returncode != 0, result
        assert "Traceback" not in result.stderr, result.stderr
        assert "billion laughs" in result.stdout + result.stderr, result


def _reads_yaml(path: Path) -> list[str]:
    """Calls that build data from YAML text (``.load``, ``.load_all``, ``.compose``, ``.parse``) in a
    module that imports ruamel: only the one reader may make them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_ruamel = any(
        (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ruamel"))
        or (isinstance(node, ast.Import) and any(a.name.startswith("ruamel") for a in node.names))
        for node in ast.walk(tree))
    if not imports_ruamel:
        return []
    return [f"{path.relative_to(STUDIO.parent)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"load", "load_all", "compose", "compose_all", "parse"}]


def test_every_yaml_the_studio_reads_goes_through_one_reader() -> None:
    readers = [hit for path in sorted(STUDIO.rglob("*.py")) if path.name != "yaml_text.py"
               for hit in _reads_yaml(path)]
    assert readers == []
