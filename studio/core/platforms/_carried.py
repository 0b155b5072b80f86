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

from pydantic import ValidationError

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import FunctionGrader, GraderDefinition, dump_grader, parse_grader

NAME = "GRADER_STUDIO"
HEADER = ("\n\n\n# Grader Studio: the definition this module was exported from, read back by `grader-studio "
          "import` while the module above is unchanged (its SHA-256 is the fingerprint).\n")


def _digest(module: str) -> str:
    return hashlib.sha256(module.encode("utf-8")).hexdigest()


def portable_dump(grader: GraderDefinition) -> JsonObject:
    """``dump_grader`` without this machine's own settings (fields marked ``LOCAL``: a folder, a key's
    variable name), which no export writes; composites' and juries' parts too."""
    dumped = dump_grader(grader)
    local = {name for name, field in type(grader).model_fields.items()
             if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("local")}
    out = {k: v for k, v in dumped.items() if k not in local}
    for part in ("components", "jurors"):
        for i, item in enumerate(getattr(grader, part, None) or []):
            out[part][i]["grader"] = portable_dump(item.grader)
    return out


def with_definitions(platform: str, module: str, graders: Sequence[GraderDefinition]) -> str:
    """``module`` followed by the block carrying ``graders`` (without their ``LOCAL`` fields)."""
    body = module.rstrip("\n")
    data = {"platform": platform, "fingerprint": _digest(body), "graders": [portable_dump(g) for g in graders]}
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
        data: JsonValue = ast.literal_eval(assign.value)
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


# ---- identity: the fields a data format has no place for, carried in its free metadata ----------

#: what a grader is called and how it is filed, none of which changes how it scores
IDENTITY = ("name", "description", "tags", "metric", "endpoint")
#: the key a format's free metadata (promptfoo's assertion ``config``) holds them under
META_KEY = "grader_studio"


def identity(grader: GraderDefinition) -> JsonObject:
    """The identity fields ``grader`` sets (defaults left out), as plain data."""
    dumped = dump_grader(grader)
    return {name: dumped[name] for name in IDENTITY if name in dumped}


def restore_identity(grader: GraderDefinition, carried_fields: JsonValue) -> GraderDefinition:
    """``grader`` with the identity fields an export carried; anything else in them is ignored."""
    if not isinstance(carried_fields, dict):
        return grader
    fields = type(grader).model_fields
    update = {name: value for name, value in carried_fields.items() if name in IDENTITY and name in fields}
    if not update:
        return grader
    try:
        return parse_grader({**dump_grader(grader), **update})
    except ValidationError:
        return grader


def adapted_fields(grader: FunctionGrader) -> JsonObject:
    """The studio source a generated adapter wraps, and its contract (for ``unadapted``)."""
    return {"contract": grader.contract, "source": grader.source, "function_name": grader.function_name}


def unadapted(grader: GraderDefinition, adapted: JsonValue, target: str) -> GraderDefinition:
    """The studio function grader a generated adapter wraps, when the export carried it (``adapted``)
    and ``grader``'s source is still exactly the adapter ``target``'s export generates for it; else
    ``grader`` as read (an edited adapter is imported as the code it now is)."""
    # an imported definition, narrowed at the import's boundary: only a function grader has an adapter
    if not isinstance(adapted, dict) or not isinstance(grader, FunctionGrader):
        return grader
    from ._adapters import adapter_module

    try:
        original = FunctionGrader.model_validate({**grader.model_dump(), "contract": adapted["contract"],
                                                  "source": adapted["source"],
                                                  "function_name": adapted.get("function_name")})
        same = adapter_module(original, target) == grader.source
    except (KeyError, ValueError):
        return grader
    return original if same else grader
