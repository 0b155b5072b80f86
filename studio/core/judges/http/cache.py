"""The judge response cache: (model, full request) -> the provider's raw answer, in the library.

Writes are buffered and flushed in one transaction per batch because a 1,000-sample run would
otherwise pay one SQLite commit per call; ``flush`` runs at the end of every scorer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from studio.core.store.database import utcnow
from studio.core.store.tables import judge_cache

MAX_ENTRIES = 200_000  # judge responses kept in the library (the oldest go first)
_SELECT = f"SELECT response FROM {judge_cache.name} WHERE key = ?"


def request_body(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent; canonical (sorted keys) so equal requests hash equally."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def cache_key(kind: str, url_path: str, body: bytes) -> str:
    """Digest of the provider, the full URL (server and API path) and the request body (the model
    is in the body)."""
    return hashlib.sha256(f"{kind} {url_path} ".encode() + body).hexdigest()


class ResponseCache:
    """Reads go straight to SQLite; writes are batched and done on one background thread so a
    run's event loop never waits on a commit. ``close`` (or ``flush``) writes what is left."""

    def __init__(self, engine: Engine, flush_every: int = 64, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._engine = engine
        self._flush_every = flush_every
        self._pending: dict[str, str] = {}
        self._writing: dict[str, str] = {}
        self._lock = threading.Lock()
        self._reader: Any = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-cache")

    def get(self, key: str) -> Any | None:
        with self._lock:
            text = self._pending.get(key) or self._writing.get(key)
            if text is None:
                # a plain DB-API read: the engine's per-transaction hooks would triple its cost
                if self._reader is None:
                    self._reader = self._engine.raw_connection()
                row = self._reader.execute(_SELECT, (key,)).fetchone()
                text = None if row is None else row[0]
        return None if text is None else json.loads(text)

    def put(self, key: str, response: Any, text: str | None = None) -> None:
        """Remember ``response``; ``text`` is its JSON as received (saves encoding it again)."""
        with self._lock:
            self._pending[key] = (
                text if text is not None else json.dumps(response, ensure_ascii=False)
            )
            full = len(self._pending) >= self._flush_every
        if full:
            self._submit()

    def _submit(self) -> Future[None]:
        with self._lock:
            items, self._pending = self._pending, {}
            self._writing.update(items)
        return self._writer.submit(self._write, items)

    def _write(self, items: dict[str, str]) -> None:
        if items:
            now = utcnow()
            rows = [{"key": k, "response": v, "created_at": now} for k, v in items.items()]
            stmt = sqlite_insert(judge_cache).values(rows)
            stmt = stmt.on_conflict_do_update(
                index_elements=[judge_cache.c.key],
                set_={"response": stmt.excluded.response, "created_at": stmt.excluded.created_at},
            )
            with self._engine.begin() as conn:
                conn.execute(stmt)
                self._evict(conn)
        with self._lock:
            for key in items:
                self._writing.pop(key, None)

    def _evict(self, conn: Any) -> None:
        """Keep the newest ``max_entries`` responses: the cache must not grow the library forever."""
        excess = conn.exec_driver_sql(f"SELECT count(*) FROM {judge_cache.name}").scalar_one() - self.max_entries
        if excess > 0:
            conn.exec_driver_sql(
                f"DELETE FROM {judge_cache.name} WHERE key IN (SELECT key FROM {judge_cache.name} "
                "ORDER BY created_at LIMIT ?)", (excess,))

    def flush(self) -> None:
        """Write everything remembered so far and wait until it is in the file."""
        self._submit().result()

    def close(self) -> None:
        self.flush()
        self._writer.shutdown(wait=True)
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def clear(self) -> int:
        self.flush()
        with self._engine.begin() as conn:
            return conn.execute(judge_cache.delete()).rowcount
