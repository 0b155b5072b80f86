"""The studio definition carried at the end of an exported Python module, so import gives it back whole.

A generated HUD module or Inspect scorer holds the grader's behaviour, but not its name, description,
tags, endpoint or the studio source it adapts, and HUD has no format of its own to read back. Each
such module ends with one ``GRADER_STUDIO = {...}`` literal: the platform, the definitions, and a
fingerprint (SHA-256) of the module above it. ``import`` reads the definitions only while the module
is as exported; an edited module is read as the platform's own code (or refused), never silently
replaced by a stale definition. The literal is plain data (read with ``ast.literal_eval``, never run)
and the platform ignores it.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from studio.core.models import GraderDefinition, dump_grader, parse_grader

NAME = "GRADER_STUDIO"
HEADER = ("\n\n\n# Grader Studio: the definition this module was exported from, read back by `grader-studio "
          "import` while the module above is unchanged (its SHA-256 is the fingerprint).\n")


def _digest(module: str) -> str:
    return hashlib.sha256(module.encode("utf-8")).hexdigest()


def with_definitions(platform: str, module: str, graders: Sequence[GraderDefinition]) -> str:
    """``module`` followed by the block carrying ``graders``."""
    body = module.rstrip("\n")
    data = {"platform": platform, "fingerprint": _digest(body), "graders": [dump_grader(g) for g in graders]}
    return f"{body}{HEADER}{NAME} = {data!r}\n"


def carried_for(text: str) -> str | None:
    """The platform a module's block names (a cheap look, for the other importers' ``detect``)."""
    at = text.rfind(HEADER)
    if at < 0:
        return None
    found = re.search(r"'platform': '([a-z0-9_]+)'", text[at:])
    return found.group(1) if found else None


def carried(text: str, platform: str) -> tuple[list[GraderDefinition] | None, str]:
    """(the definitions, "") when ``text`` ends with this platform's block and is unchanged above it;
    (None, why) when it has a block that cannot be trusted; (None, "") when it has none."""
    at = text.rfind(HEADER)
    if at < 0:
        return None, ""
    block = text[at + len(HEADER):]
    try:
        tree = ast.parse(block)
        assign = tree.body[0]
        if len(tree.body) != 1 or not isinstance(assign, ast.Assign) or ast.unparse(assign.targets[0]) != NAME:
            return None, f"its {NAME} block is not one assignment"
        data: Any = ast.literal_eval(assign.value)
    except (SyntaxError, ValueError, IndexError, RecursionError, MemoryError):
        return None, f"its {NAME} block is not a plain literal"
    if not isinstance(data, dict) or data.get("platform") != platform:
        return None, ""
    if data.get("fingerprint") != _digest(text[:at]):
        return None, "the module was changed after it was exported"
    try:
        return [parse_grader(g) for g in data.get("graders") or []], ""
    except ValidationError as exc:
        return None, f"its {NAME} block holds no valid definition ({exc.errors()[0]['msg']})"
