"""A platform file that does not parse is refused with the line it breaks on (a file cut short
among them): the Python half here (this module builds no YAML, so ``ast.parse`` is not mistaken for
a YAML reader), JSON and YAML by ``_fields``' readers."""

from __future__ import annotations

import ast
from pathlib import Path

from ._base import PlatformError
from ._fields import load_yaml_text, read_json, read_text, refuse_cut


def parse_python(text: str, path: Path) -> ast.Module:
    """A platform's Python file as a syntax tree (never run); a syntax error names its line, and a
    file cut short that still parses is refused (``refuse_cut``)."""
    try:
        tree = ast.parse(text, filename=path.name)
    except SyntaxError as exc:
        raise PlatformError(f"{path}:{exc.lineno}: not valid Python ({exc.msg})") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte; nesting the parser gives up on
        raise PlatformError(f"{path}: not valid Python ({exc})") from None
    refuse_cut(text, str(path))
    return tree


def refuse_unreadable(path: Path) -> None:
    """Raise the syntax error (with its line) of a JSON, YAML or Python file no importer recognised,
    rather than only "cannot tell which platform": a file cut short is named where it breaks."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        read_json(path)
    elif suffix in {".yaml", ".yml"}:
        load_yaml_text(read_text(path), path.name)
    elif suffix == ".py":
        parse_python(read_text(path), path)
