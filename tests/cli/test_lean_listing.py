"""``graders list`` reads the library with plain sqlite3 (no SQLAlchemy, no pydantic) when it can:
what it prints must be what the full CLI prints, and anything it cannot do is left to the full CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli import listing, main
from studio.core.models import BuiltinGrader, FunctionGrader
from studio.core.store import Library
from studio.core.store.schema import SCHEMA_VERSION

FLAGS = [[], ["--json"], ["--all"], ["--trash"], ["--all", "--json"], ["--trash", "--json", "--all"]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "lib.sqlite"
    with Library.open(path) as lib:
        lib.graders.create(BuiltinGrader(key="exact", name="Exact ✓", function="exact_match"))
        lib.graders.create(FunctionGrader(key="fn", source="async def grade(thread):\n    return 1.0\n"))
        lib.graders.create(BuiltinGrader(key="gone", function="exact_match"))
        lib.graders.create(BuiltinGrader(key="kept", function="exact_match"))
        lib.graders.set_locked("kept", True)
        lib.graders.delete("gone")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


@pytest.mark.parametrize("flags", FLAGS)
def test_the_lean_listing_prints_what_the_full_cli_prints(db: Path, flags: list[str], capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["--db", str(db), "graders", "list", *flags]
    assert listing.lean_list(argv) == 0  # the lean path really takes it
    capsys.readouterr()
    lean = run(argv, capsys)
    monkeypatch.setattr(listing, "lean_list", lambda argv: None)
    full = run(argv, capsys)
    assert lean == full and full[1].strip()


def test_the_lean_listing_leaves_what_it_cannot_do_to_the_full_cli(db: Path, tmp_path: Path) -> None:
    assert listing.lean_list(["--db", str(db), "graders", "list", "--help"]) is None
    assert listing.lean_list(["--db", str(db), "graders", "show", "exact"]) is None
    assert listing.lean_list(["--db", str(tmp_path / "new.sqlite"), "graders", "list"]) is None  # to create
    assert not (tmp_path / "new.sqlite").exists()
    import sqlite3

    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # a newer studio's file: the full CLI refuses it
    con.commit()
    con.close()
    assert listing.lean_list(["--db", str(db), "graders", "list"]) is None


def test_listing_imports_neither_sqlalchemy_nor_pydantic(db: Path) -> None:
    code = ("import sys\nfrom studio.cli import main\ncode = main(['--db', sys.argv[1], 'graders', 'list'])\n"
            "print([m for m in ('sqlalchemy', 'pydantic') if m in sys.modules], code)")
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[] 0"), out


_ANY = ("array", "boolean", "integer", "null", "number", "object", "string")
_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
          type(None): "null"}


def _json_types(prop: dict, defs: dict) -> set[str]:  # type: ignore[type-arg]
    """The JSON types a property of a model's JSON schema accepts at its top level."""
    if "$ref" in prop:
        return _json_types(defs[prop["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in prop:
            return set().union(*(_json_types(p, defs) for p in prop[key]))
    if "const" in prop:
        return {_NAMES[type(prop["const"])]}
    if "enum" in prop:
        return {_NAMES[type(v)] for v in prop["enum"]}
    if "type" in prop:
        types = {prop["type"]} if isinstance(prop["type"], str) else set(prop["type"])
        return types | ({"integer"} if "number" in types else set())
    return set(_ANY)


def test_the_lean_listing_knows_each_kinds_shape_as_the_models_do() -> None:
    """grader_shapes.SHAPES is the models' JSON schemas' top level (regenerate it when this fails)."""
    from studio.cli.grader_shapes import SHAPES
    from studio.core.graders.registry import kinds
    from studio.core.models.union import model_for

    derived = {}
    for kind in sorted(kinds()):
        schema = model_for(kind).model_json_schema()
        defs = schema.get("$defs", {})
        derived[kind] = (tuple(sorted(schema.get("required", ()))),
                         {name: tuple(sorted(_json_types(p, defs))) for name, p in schema["properties"].items()},
                         schema.get("additionalProperties") is False)
    assert derived == SHAPES, derived
    assert set(listing.KINDS) == set(kinds())


@pytest.mark.parametrize("key", ["bad-function", "unknown-kind", "not-json", "timeless", "no-version", "extra-field"])
def test_a_row_the_lean_listing_cannot_vouch_for_is_listed_broken(db: Path, key: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A teammate's row the lean path cannot vouch for leaves the listing to the full CLI, which
    shows it BROKEN with its author (never listed as a normal grader)."""
    import json

    from hostile_rows import AUTHOR, BAD_GRADERS
    from sqlalchemy import text

    with Library.open(db) as lib:
        lib.graders.create(BuiltinGrader(key=key, function="exact_match"))
        definition = {"extra-field": json.dumps({"kind": "builtin", "key": key, "function": "exact_match",
                                                 "from_the_future": 1})}.get(key, BAD_GRADERS.get(key))
        with lib.engine.begin() as conn:
            if definition is not None:
                conn.execute(text("INSERT INTO grader_versions (grader_id, version, action, definition, message,"
                                  " created_at, author) SELECT id, 2, 'save', :d, '', CURRENT_TIMESTAMP, :a"
                                  " FROM graders WHERE key = :k"), {"d": definition, "a": AUTHOR, "k": key})
            if key == "timeless":
                conn.execute(text("UPDATE graders SET updated_at = 'yesterday' WHERE key = :k"), {"k": key})
            else:
                conn.execute(text("UPDATE graders SET current_version = 2 WHERE key = :k"), {"k": key})
    argv = ["--db", str(db), "graders", "list"]
    assert listing.lean_list(argv) is None
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "exact" in out and f"“{key}" in err and "BROKEN" in out
    (line,) = [row for row in out.splitlines() if row.startswith(key)]
    assert "BROKEN" in line
