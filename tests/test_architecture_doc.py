"""docs/architecture.md stays true: every file or folder it names exists (a renamed or removed
module makes this fail until the page follows)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
#: a path from the repository's root, as the page writes them (``studio/core/kinds.py``,
#: ``tests/judge_helpers.library_bytes`` for a module's attribute, ``.../<kind>.py`` for a pattern)
PATH = re.compile(r"(?<![\w./-])((?:studio|tests|docs|bench|resources|packaging|\.ci)/[\w./<>-]*[\w/>])")


def named_paths(text: str) -> list[str]:
    return sorted(set(PATH.findall(text)))


def missing(paths: list[str]) -> list[str]:
    """The paths that name nothing: neither a file or folder, nor a module's attribute (``a/b.name``
    for ``a/b.py``), nor a pattern whose folder exists (``a/<kind>.py``)."""
    out = []
    for path in paths:
        if "<" in path:
            path = path[:path.index("<")].rsplit("/", 1)[0]
        if (ROOT / path).exists():
            continue
        folder, _, name = path.rpartition("/")
        if "." in name and (ROOT / folder / (name.split(".", 1)[0] + ".py")).exists():
            continue
        out.append(path)
    return out


def test_every_path_the_architecture_page_names_exists() -> None:
    paths = named_paths(DOC.read_text(encoding="utf-8"))
    # the recipes' files are among them
    for recipe_file in ("studio/core/kinds.py", "studio/core/judges/http/providers/__init__.py",
                        "tests/toy_kind.py", "tests/toy_provider.py", "tests/test_adding_a_kind_and_provider.py"):
        assert recipe_file in paths
    assert missing(paths) == []


def test_a_path_that_names_nothing_is_found() -> None:
    text = "see `studio/core/kinds.py`, `tests/judge_helpers.library_bytes`, `studio/ui/editor/bodies/<kind>.py`" \
           " and `studio/core/graders/gone.py`"
    assert missing(named_paths(text)) == ["studio/core/graders/gone.py"]
