"""Grader definition files (``*.grader.yaml`` / ``*.grader.json``) with a ``schema_version``.

YAML is written for people (multi-line text as block scalars, defaults left out); a file that fails
validation is reported field by field with the line each field stands on.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject, JsonValue
from studio.core.safe_files import read_regular, read_regular_text, write_text
from studio.core.yaml_text import YamlRefused, read_yaml

from .common import GraderBase
from .definition import GRADER_ADAPTER, dump_grader, union_json_schema
from .union import GraderDefinition

SCHEMA_VERSION = 1


class DefinitionError(StudioError, ValueError):
    """A definition file that does not validate; ``problems`` has one entry per bad field."""

    def __init__(self, source: str, problems: list[tuple[int | None, str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = [
            f"{source}:{line if line is not None else '?'}: {field or '(file)'}: {message}"
            for line, field, message in problems
        ]
        super().__init__("\n".join(lines))


def _literal_strings(value: object) -> object:
    """Multi-line strings become ``|`` block scalars so source code and prompts stay readable."""
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value if value.endswith("\n") else value)
    if isinstance(value, dict):
        return {k: _literal_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal_strings(v) for v in value]
    return value


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True
    return yaml


def to_document(grader: GraderBase) -> JsonObject:
    return {"schema_version": SCHEMA_VERSION, **dump_grader(grader)}


def to_yaml(grader: GraderBase) -> str:
    buffer = io.StringIO()
    _yaml().dump(_literal_strings(to_document(grader)), buffer)
    return buffer.getvalue()


def to_json(grader: GraderBase) -> str:
    return json.dumps(to_document(grader), indent=2, ensure_ascii=False) + "\n"


def _line_of(node: object, loc: tuple[str | int, ...]) -> int | None:
    """1-based line of the deepest node along ``loc`` that the YAML parser recorded."""
    line: int | None = None
    for part in loc:
        if isinstance(node, CommentedMap) and part in node:
            line = node.lc.key(part)[0] + 1
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and part < len(node):
            line = node.lc.item(part)[0] + 1
            node = node[part]
    return line


def _field_path(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in loc)


def parse_document(data: object, source: str = "<definition>", tree: object = None) -> GraderDefinition:
    """Validate a loaded document (schema_version + grader fields) into a definition."""
    if not isinstance(data, dict):
        raise DefinitionError(source, [(1, "", "a grader definition must be a mapping of fields")])
    body = dict(data)
    version = body.pop("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise DefinitionError(
            source,
            [(_line_of(tree, ("schema_version",)), "schema_version",
              f"unsupported schema_version {version!r} (this studio reads {SCHEMA_VERSION})")],
        )
    try:
        return GRADER_ADAPTER.validate_python(body)
    except ValidationError as exc:
        problems = [
            (_line_of(tree, loc), _field_path(loc), err["msg"])
            for err in exc.errors()
            for loc in [tuple(err["loc"]) + (("kind",) if "union_tag" in err["type"] else ())]
        ]
        raise DefinitionError(source, problems) from None


def read_tree(text: str, source: str = "<definition>") -> JsonValue:
    """YAML or JSON text as ruamel's tree (lines kept), read by the studio's one YAML reader with the
    grader file's rule: no aliases at all (``studio/core/yaml_text.py``)."""
    try:
        return read_yaml(text, source, aliases=False, lines=True, what="a grader file")
    except YamlRefused as exc:
        raise DefinitionError(source, [(exc.line, "", exc.reason)]) from None


def plain(tree: JsonValue) -> JsonValue:
    """A tree ``read_tree`` gave as plain dicts, lists and scalars."""
    return _plain(tree)


def dump_yaml(data: object) -> str:
    """``data`` as YAML written for people (multi-line text as block scalars)."""
    buffer = io.StringIO()
    _yaml().dump(_literal_strings(data), buffer)
    return buffer.getvalue()


def loads(text: str, source: str = "<definition>") -> GraderDefinition:
    """Parse YAML or JSON text (JSON is YAML, so one parser gives lines for both)."""
    tree = read_tree(text, source)
    return parse_document(_plain(tree), source, tree)


def _plain(value: JsonValue) -> JsonValue:

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def load(path: str | Path) -> GraderDefinition:
    path = Path(path)
    try:
        text = read_regular_text(path)  # a FIFO or a device named as a grader file would never end
    except OSError as exc:
        raise DefinitionError(str(path), [(None, "", f"cannot read the file: {exc.strerror}")]) from None
    except UnicodeDecodeError as exc:
        line = read_regular(path)[: exc.start].count(b"\n") + 1
        raise DefinitionError(str(path), [(line, "", "not UTF-8 text (save the file as UTF-8)")]) from None
    return loads(text, str(path))


def save(grader: GraderBase, path: str | Path) -> Path:
    path = Path(path)
    text = to_json(grader) if path.suffix == ".json" else to_yaml(grader)
    return write_text(path, text)  # never through a link planted at ``path``


def json_schema() -> JsonObject:
    """JSON Schema of a definition file: the grader union plus ``schema_version``."""
    schema = union_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Grader Studio grader definition",
        "description": f"A *.grader.yaml / *.grader.json file, schema_version {SCHEMA_VERSION}",
        "allOf": [
            {"type": "object", "properties": {"schema_version": {"const": SCHEMA_VERSION}}},
            schema,
        ],
        **({"$defs": schema.pop("$defs")} if "$defs" in schema else {}),
    }
