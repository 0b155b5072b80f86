"""What "New grader" starts from: a small working definition per kind, or a shipped demo file."""

from __future__ import annotations

from pathlib import Path

from studio.core.graders.registry import get_kind
from studio.core.models import GraderDefinition, parse_grader
from studio.core.models import files as definition_files
from studio.core.paths import demo_dir


def starter(kind: str, key: str, name: str = "") -> GraderDefinition:
    return parse_grader({"kind": kind, "key": key, "name": name, **get_kind(kind).starter})


def templates() -> dict[str, Path]:
    """Shipped example graders by display label."""
    found: dict[str, Path] = {}
    folder = demo_dir() / "graders"
    for path in sorted(folder.glob("*.grader.yaml")):
        found[path.name.removesuffix(".grader.yaml")] = path
    return found


def from_template(path: Path, key: str, name: str = "") -> GraderDefinition:
    data = definition_files.to_document(definition_files.load(path))
    data.pop("schema_version", None)
    data["key"] = key
    if name:
        data["name"] = name
    return parse_grader(data)
