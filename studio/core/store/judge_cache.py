"""The library's judge-cache repository: every SQL on the ``judge_cache`` table (key -> raw answer).

What a key is, when to read and how writes are batched is the judge client's business
(``studio.core.judges.http.cache``); this module only stores, reads, trims and clears.
"""

from __future__ import annotations

import importlib
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.pool import PoolProxiedConnection

from studio.core.store.database import utcnow
from studio.core.store.holder import HasEngine
from studio.core.store.tables import judge_cache

_SELECT = f"SELECT response FROM {judge_cache.name} WHERE key = ?"


class JudgeCacheReader:
    """One plain DB-API connection for lookups: the engine's per-transaction hooks would triple the
    cost of a read, and a run reads once per judge call. Not thread-safe: its owner serialises."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn: PoolProxiedConnection | None = None

    def response(self, key: str) -> str | None:
        """The stored answer's JSON text for ``key``, or ``None``."""
        if self._conn is None:
            self._conn = self._engine.raw_connection()
        row = self._conn.execute(_SELECT, (key,)).fetchone()
        if self._engine.dialect.name != "sqlite":
            self._conn.rollback()  # a server's read opens a transaction: not left open between calls
        return None if row is None else row[0]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class JudgeCacheRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @classmethod
    def of(cls, library: HasEngine | Engine) -> JudgeCacheRepository:
        """Accepts a Library or a bare Engine (tests, tools that open the file themselves)."""
        engine = library if isinstance(library, Engine) else library.engine
        return cls(engine)

    def reader(self) -> JudgeCacheReader:
        return JudgeCacheReader(self._engine)

    def write(self, items: dict[str, str], max_entries: int) -> None:
        """Insert or replace ``items`` (key -> JSON text) and trim to the newest ``max_entries``, in
        one transaction (one commit per batch, not per answer)."""
        if not items:
            return
        now = utcnow()
        rows = [{"key": k, "response": v, "created_at": now} for k, v in items.items()]
        # the dialect's own INSERT, imported for the library in use (a SQLite one loads no PostgreSQL)
        dialect = "sqlite" if self._engine.dialect.name == "sqlite" else "postgresql"
        dialect_insert: Any = importlib.import_module(f"sqlalchemy.dialects.{dialect}").insert
        stmt = dialect_insert(judge_cache).values(rows)
        stmt = stmt.on_conflict_do_update(
            index_elements=[judge_cache.c.key],
            set_={"response": stmt.excluded.response, "created_at": stmt.excluded.created_at},
        )
        with self._engine.begin() as conn:
            conn.execute(stmt)
            self._evict(conn, max_entries)

    @staticmethod
    def _evict(conn: Connection, max_entries: int) -> None:
        """Keep the newest ``max_entries`` responses: the cache must not grow the library forever."""
        excess = conn.exec_driver_sql(f"SELECT count(*) FROM {judge_cache.name}").scalar_one() - max_entries
        if excess > 0:
            conn.exec_driver_sql(
                f"DELETE FROM {judge_cache.name} WHERE key IN (SELECT key FROM {judge_cache.name} "
                "ORDER BY created_at LIMIT ?)", (excess,))

    def clear(self) -> int:
        """Forget every cached answer; the number removed."""
        with self._engine.begin() as conn:
            return conn.execute(judge_cache.delete()).rowcount
