"""The Alembic chain (studio/core/store/revisions) against what the studio reads without Alembic
(store/schema.py), and a library written by a newer release refused on both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory

from studio.core.store import Library
from studio.core.store.database import ALEMBIC_DIR, SchemaTooNew, stored_revision
from studio.core.store.schema import HEAD_REVISION, REVISIONS


def test_the_schema_constants_follow_the_alembic_chain() -> None:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    script = ScriptDirectory.from_config(config)
    assert script.get_heads() == [HEAD_REVISION]
    chain = [rev.revision for rev in script.walk_revisions("base", "heads")]
    assert tuple(reversed(chain)) == REVISIONS


def test_a_library_of_a_newer_release_is_refused(db_path: Path | str) -> None:
    with Library.open(db_path) as lib, lib.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0099_future'")
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("PRAGMA user_version = 99")
    with pytest.raises(SchemaTooNew, match="newer Grader Studio"):
        Library.open(db_path)


def test_opening_twice_migrates_once(db_path: Path | str) -> None:
    with Library.open(db_path) as lib, lib.engine.connect() as conn:
        assert stored_revision(conn) == HEAD_REVISION
        assert conn.exec_driver_sql("SELECT count(*) FROM alembic_version").scalar() == 1
