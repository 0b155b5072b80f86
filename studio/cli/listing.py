"""``grader-studio graders list`` without SQLAlchemy or pydantic: a read-only ``sqlite3`` read.

Listing is the command people and scripts run most, and the library layer's imports cost several
times what the listing itself does. When the command line is exactly ``[--db PATH] graders list
[--json] [--all] [--trash]`` and the library file exists at the schema this studio writes, the rows
are read here with the same query and printed the same way; anything else (another flag, --help, a
file to create or migrate, a file sqlite cannot read) returns None and the full CLI runs instead.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.outside import iso_time

from .grader_shapes import SHAPES

if TYPE_CHECKING:  # the lean listing imports nothing it does not run (tests/cli/test_startup_imports.py)
    from studio.core.json_types import JsonObject

_FLAGS = frozenset({"--json", "--all", "--trash"})

_QUERY = """SELECT g.key, g.kind, g.name, g.locked, g.deleted_at, g.current_version, g.updated_at
FROM graders g JOIN grader_versions v ON v.grader_id = g.id AND v.version = g.current_version
{where} ORDER BY g.kind, g.key"""
#: one row of ``_QUERY``: key, kind, name, locked, deleted_at, current_version, updated_at (DATETIME text)
#: (a time column may hold anything a hand edit put there)
GraderRow = tuple[str, str, str, int, str | None, int, object]

#: the grader kinds this studio reads (grader_shapes.py, kept equal to the models by a test:
#: importing the registry here would cost what this path saves)
KINDS = tuple(SHAPES)

# A row this path cannot vouch for (a teammate's, a hand edit's, another studio's): a current
# version that is missing, not a JSON object, of a kind this studio does not know or of another
# grader. One pass in SQLite's C JSON functions; any such row leaves the listing to the full CLI,
# which validates every row and shows the broken ones BROKEN (docs/security.md).
_SUSPECT = """SELECT g.key FROM graders g
LEFT JOIN grader_versions v ON v.grader_id = g.id AND v.version = g.current_version
WHERE v.grader_id IS NULL OR NOT json_valid(v.definition) OR json_type(v.definition) IS NOT 'object'
OR g.kind NOT IN ({kinds}) OR json_extract(v.definition, '$.kind') IS NOT g.kind
OR json_extract(v.definition, '$.key') IS NOT g.key LIMIT 1""".format(kinds=", ".join(f"'{k}'" for k in KINDS))
_DEFINITIONS = """SELECT g.kind, v.definition FROM graders g
JOIN grader_versions v ON v.grader_id = g.id AND v.version = g.current_version"""
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


def vouched(kind: str, text: str) -> bool:
    """Whether a stored definition has its kind's top-level shape (SHAPES): its required fields,
    each field's JSON type, no field the kind refuses. Not a full validation (nested values are the
    full CLI's), but a teammate's ``"function": 12`` is caught without importing pydantic."""
    try:
        definition = json.loads(text)
    except (ValueError, RecursionError):
        return False
    required, fields, closed = SHAPES[kind]
    if not isinstance(definition, dict) or not set(required) <= definition.keys():
        return False
    for name, value in definition.items():
        allowed = fields.get(name)
        if allowed is None:
            if closed:
                return False
        elif _JSON_TYPES.get(type(value)) not in allowed:
            return False
    return True


def _parse(argv: Sequence[str]) -> tuple[str | None, set[str]] | None:
    """(--db value, flags) for a plain listing command line, else None."""
    args = list(argv)
    db: str | None = None
    if args[:1] == ["--db"] and len(args) >= 2:
        db, args = args[1], args[2:]
    elif args[:1] and args[0].startswith("--db="):
        db, args = args[0][len("--db="):], args[1:]
    if args[:2] != ["graders", "list"] or not set(args[2:]) <= _FLAGS:
        return None
    return db, set(args[2:])


def lean_list(argv: Sequence[str]) -> int | None:
    """The exit code of a listing done here, or None when the full CLI must run it."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    db, flags = parsed
    from studio.core.store.location import BadLocation, is_server_url, resolve_db_path
    from studio.core.store.schema import SCHEMA_VERSION

    try:
        path = resolve_db_path(db)
    except BadLocation:
        return None  # the full path refuses it in its sentence
    if is_server_url(path) or not isinstance(path, Path) or not path.is_file():
        return None  # the full path creates the library
    where = ("WHERE g.deleted_at IS NOT NULL" if "--trash" in flags
             else "" if "--all" in flags else "WHERE g.deleted_at IS NULL")
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                return None  # to migrate, or too new: the full path says so
            if con.execute(_SUSPECT).fetchone() is not None or not all(
                    vouched(kind, text) for kind, text in con.execute(_DEFINITIONS)):
                return None  # a row to show BROKEN: the full CLI validates every row
            rows = con.execute(_QUERY.format(where=where)).fetchall()
        finally:
            con.close()
    except (sqlite3.Error, ValueError):
        return None
    from .app import CliApp

    try:
        records = [_record(row) for row in rows]
    except _BadTime:  # a time that is no time: the full CLI shows that grader BROKEN
        return None
    if "--json" in flags:
        CliApp.print_json(records)
    else:
        CliApp.print_table([table_row(key, kind, version, bool(locked), deleted is not None, name)
                            for key, kind, name, locked, deleted, version, _ in rows], TABLE_HEADERS)
    return 0


class _BadTime(ValueError):
    def __init__(self, key: str, value: object) -> None:
        super().__init__(f"{key!r}: {value!r}")
        self.key, self.value = key, value


def _record(row: GraderRow) -> JsonObject:
    """``graders.record_dict`` of one row (the stored DATETIME text read as the library reads it)."""
    key, kind, name, locked, deleted, version, updated = row
    try:
        when = datetime.fromisoformat(updated) if isinstance(updated, str) else None
    except ValueError:
        when = None
    if when is None:  # NULL, a number, a word: no time
        raise _BadTime(key, updated)
    return grader_fields(key, kind, name, version, bool(locked), deleted is not None, when)


# One listing format for both paths (this lean one and ``graders list`` through the library).
TABLE_HEADERS = ["KEY", "KIND", "VERSION", "LOCK", "STATE", "NAME"]


def table_row(key: str, kind: str, version: int, locked: bool, deleted: bool, name: str) -> list[str | int]:
    return [key, kind, version, "locked" if locked else "", "deleted" if deleted else "", name]


def grader_fields(key: str, kind: str, name: str, version: int, locked: bool, deleted: bool,
                  updated_at: datetime | None) -> JsonObject:
    return {"key": key, "kind": kind, "name": name, "version": version, "locked": locked,
            "deleted": deleted, "updated_at": iso_time(updated_at)}
