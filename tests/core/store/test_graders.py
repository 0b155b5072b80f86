from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import inspect
from sqlalchemy.exc import DBAPIError

from studio.core.models import BuiltinGrader, FunctionGrader
from studio.core.store import Conflict, Library, Locked, NotFound
from studio.core.store.database import stored_revision
from studio.core.store.schema import HEAD_REVISION, SCHEMA_VERSION
from studio.core.store.tables import metadata

SOURCE = "async def grade(thread):\n    return 1.0\n"


def fn(source: str = SOURCE, **kw: object) -> FunctionGrader:
    return FunctionGrader(key="exact", name="Exact", source=source, **kw)


def test_three_saves_make_three_versions_with_diffs(library: Library) -> None:
    library.graders.create(fn())
    library.graders.save(fn(SOURCE.replace("1.0", "0.5")))
    library.graders.save(fn(SOURCE.replace("1.0", "0.25")), message="quarter")
    versions = library.graders.versions("exact")
    assert [v.version for v in versions] == [1, 2, 3]
    assert [v.action for v in versions] == ["create", "save", "save"]
    assert versions[2].message == "quarter"
    diff = library.graders.diff("exact", 2, 3)
    assert "-      return 0.5" in diff and "+      return 0.25" in diff
    assert library.graders.get("exact").current_version == 3


def test_unchanged_save_adds_no_version(library: Library) -> None:
    library.graders.create(fn())
    library.graders.save(fn())
    assert len(library.graders.versions("exact")) == 1


def test_lock_blocks_edit_and_delete(library: Library) -> None:
    library.graders.create(fn())
    library.graders.set_locked("exact", True)
    with pytest.raises(Locked, match="locked"):
        library.graders.save(fn(SOURCE.replace("1.0", "0.0")))
    with pytest.raises(Locked, match="unlock"):
        library.graders.delete("exact")
    assert library.graders.get("exact").current_version == 1
    library.graders.set_locked("exact", False)
    library.graders.delete("exact")


def test_delete_restore_round_trip(library: Library) -> None:
    library.graders.create(fn())
    library.graders.delete("exact")
    assert [g.key for g in library.graders.list()] == []
    assert [g.key for g in library.graders.list(deleted_only=True)] == ["exact"]
    with pytest.raises(NotFound, match="trash"):
        library.graders.get("exact")
    restored = library.graders.restore("exact")
    assert restored.definition == fn() and not restored.deleted


def test_recreate_continues_history(library: Library) -> None:
    library.graders.create(fn())
    with pytest.raises(Conflict):
        library.graders.create(fn())
    library.graders.delete("exact")
    other = BuiltinGrader(key="exact", function="exact_match")
    record = library.graders.create(other)
    assert record.kind == "builtin" and record.current_version == 2
    versions = library.graders.versions("exact")
    assert [v.action for v in versions] == ["create", "recreate"]
    assert versions[0].definition == fn()  # nothing the user wrote is lost


def test_restore_old_version_appends(library: Library) -> None:
    library.graders.create(fn())
    library.graders.save(fn(SOURCE.replace("1.0", "0.0")))
    record = library.graders.restore_version("exact", 1)
    assert record.current_version == 3 and record.definition == fn()


def test_versions_are_immutable_in_the_database(library: Library) -> None:
    library.graders.create(fn())
    for statement in ("UPDATE grader_versions SET definition = '{}'", "DELETE FROM grader_versions"):
        with pytest.raises(DBAPIError, match="immutable"), library.engine.begin() as conn:
            conn.exec_driver_sql(statement)


def test_migrated_schema_matches_tables(library: Library, db_path) -> None:  # type: ignore[no-untyped-def]
    inspector = inspect(library.engine)
    for table in metadata.sorted_tables:
        columns = {c["name"] for c in inspector.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}, table.name
    with library.engine.connect() as conn:
        assert stored_revision(conn) == HEAD_REVISION
    if library.is_server:
        return
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_reopen_applies_nothing_twice(db_path) -> None:  # type: ignore[no-untyped-def]
    Library.open(db_path).close()
    lib = Library.open(db_path)
    lib.graders.create(fn())
    lib.close()
    with Library.open(db_path) as again:
        assert again.graders.get("exact").key == "exact"


def test_version_one_library_migrates_and_keeps_its_data(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from legacy import MIGRATIONS

    db_path = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(db_path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO graders VALUES (1, 'old', 'builtin', '', 0, NULL, 1, '2026-01-01', '2026-01-01')")
    conn.execute("INSERT INTO grader_versions VALUES (1, 1, 1, 'create', "
                 "'{\"kind\": \"builtin\", \"key\": \"old\", \"function\": \"contains\"}', '', '2026-01-01')")
    conn.commit()
    conn.close()
    with Library.open(db_path) as lib:
        assert lib.graders.get("old").definition.function == "contains"
        columns = {c["name"] for c in inspect(lib.engine).get_columns("runs")}
        assert "owner_pid" in columns
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
    conn.close()
