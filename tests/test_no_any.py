"""The window and the CLI name their types: no ``Any`` in studio/ui and studio/cli (issue 45: "``Any``
only at decoded-JSON boundaries").

A value that came out of ``json.loads`` (a ``--json`` payload, a stored JSON column, an HTTP answer) is
spelled with the core's aliases, ``JsonObject``, ``JsonArray`` or ``JsonValue`` (studio/core/json_types.py,
the one place ``Any`` is written for decoded JSON); everything else is a Qt class, one of the studio's
models, a Protocol, a TypeVar, or ``object`` when it is only passed on or printed. An ``Any`` anywhere
else switches mypy off for whatever it touches, so a wrong attribute or a ``None`` slips through
unchecked: this test finds it by reading the source (``ast``), annotations in quotes and ``cast("...")``
included. A ``dict[str, Any]`` is refused too: one alias for decoded JSON everywhere, so a reader
finds every boundary by its name.
"""
from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECKED = ("studio/ui", "studio/cli")

# Files allowed their ``Any`` for now, each with why. Keep it tiny.
ALLOWED: dict[str, str] = {}


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Attribute) and node.attr == "Any")


def _quoted(tree: ast.AST) -> Iterator[ast.expr]:
    """Annotations written as strings (and ``cast("T", ...)``'s type), parsed."""
    for node in ast.walk(tree):
        texts: list[ast.expr] = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            texts.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            texts.append(node.returns)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cast" and node.args:
            texts.append(node.args[0])
        for text in texts:
            for part in ast.walk(text):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    with contextlib.suppress(SyntaxError):  # a docstring-like string, not a type
                        yield ast.parse(part.value, mode="eval").body


def stray_any(source: str) -> list[int]:
    """Line numbers of the ``Any`` in ``source`` (a quoted annotation's: its own line within the quote)."""
    tree = ast.parse(source)
    return sorted(getattr(node, "lineno", 0) for root in (tree, *_quoted(tree)) for node in ast.walk(root)
                  if _is_any(node))


def test_any_only_at_decoded_json() -> None:
    found: list[str] = []
    for folder in CHECKED:
        for path in sorted((REPO / folder).rglob("*.py")):
            name = path.relative_to(REPO).as_posix()
            if name in ALLOWED:
                continue
            found.extend(f"{name}:{line}" for line in stray_any(path.read_text(encoding="utf-8")))
    assert not found, ("Any in the window or the CLI (decoded JSON: studio.core.json_types' JsonObject, "
                       "JsonArray or JsonValue):\n" + "\n".join(found))


def test_the_check_tells_json_from_any() -> None:
    """The reader itself: what it lets through and what it catches."""
    assert stray_any("from typing import Any\nfrom studio.core.json_types import JsonArray, JsonObject\n"
                     "def f(a: JsonObject, b: JsonArray) -> list[JsonObject]: ...\n") == []  # importing is no use
    assert stray_any("def f(a: Any) -> None: ...\n") == [1]
    assert stray_any("def f() -> typing.Any: ...\n") == [1]
    assert stray_any("x: dict[str, Any] = {}\n") == [1]          # decoded JSON has its alias
    assert stray_any("x: list[Any] = []\n") == [1]
    assert stray_any("x: tuple[Any, ...] = ()\n") == [1]
    assert stray_any("x: list[dict[str, Any]] = []\n") == [1]
    assert stray_any("x: Callable[..., Any]\n") == [1]
    assert stray_any('def f(a: "Any") -> None: ...\n') == [1]      # quoted
    assert stray_any('y = cast("list[Any] | Any", x)\n') == [1, 1]
    assert stray_any("def f(**kw: Any) -> None: ...\n") == [1]


def test_allowed_files_exist() -> None:
    """An allow-list entry for a file that is gone, or that needs it no more, is dropped."""
    for name in ALLOWED:
        path = REPO / name
        assert path.exists(), name
        assert stray_any(path.read_text(encoding="utf-8")), f"{name} has no stray Any: drop it from ALLOWED"
