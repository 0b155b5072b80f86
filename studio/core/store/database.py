"""Opening the library file: SQLite in WAL mode, real transactions, migrations applied on open."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, CursorResult, Engine, create_engine, event
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from .migrations import migrate


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def driver_connection(pooled: PoolProxiedConnection) -> sqlite3.Connection:
    """The sqlite3 connection under a pooled one, for the hot paths that skip the SQL layer.

    The pool types it loosely (any driver, or none once the connection is closed); every engine here
    is opened by ``open_engine`` on pysqlite, so anything else is a bug worth a loud error.
    """
    raw = pooled.driver_connection
    if not isinstance(raw, sqlite3.Connection):
        raise TypeError(f"expected a sqlite3 connection under the pool, got {type(raw).__name__}")
    return raw


def inserted_id(result: CursorResult[Any]) -> int:
    """The integer primary key of the row an INSERT just made.

    SQLAlchemy types the key as optional (other statements have none); every table here has an
    integer ``id``, so a missing key means the statement was not a one-row INSERT: a bug.
    """
    key = result.inserted_primary_key
    if key is None:
        raise TypeError("the statement inserted no row with a primary key")
    return int(key[0])


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
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    with engine.begin() as conn:
        migrate(conn)
    return engine
