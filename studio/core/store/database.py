"""Opening the library file: SQLite in WAL mode, real transactions, migrations applied on open."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, create_engine, event

from .migrations import migrate


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def open_engine(path: Path | str) -> Engine:
    """An engine whose transactions are real SQLite transactions (DDL included).

    pysqlite's own transaction handling skips DDL and PRAGMAs; we turn it off and emit BEGIN
    ourselves, so a migration and its ``user_version`` bump commit together or not at all.
    """
    url = "sqlite://" if str(path) == ":memory:" else f"sqlite:///{Path(path)}"
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        conn.exec_driver_sql("BEGIN")

    with engine.begin() as conn:
        migrate(conn)
    return engine
