"""The judge response cache: (model, full request) -> the provider's raw answer, in the library.

Writes are buffered and flushed in one transaction per batch because a 1,000-sample run would
otherwise pay one SQLite commit per call; ``flush`` runs at the end of every scorer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from sqlalchemy import Engine

from studio.core.json_types import JsonObject, JsonValue
from studio.core.outside import json_text, loads_outside
from studio.core.store.judge_cache import JudgeCacheRepository

MAX_ENTRIES = 200_000  # judge responses kept in the library (the oldest go first)


def request_body(payload: JsonObject) -> bytes:
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
        self._store = JudgeCacheRepository.of(engine)
        self._flush_every = flush_every
        self._pending: dict[str, str] = {}
        self._writing: dict[str, str] = {}
        self._lock = threading.Lock()
        self._reader = self._store.reader()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-cache")

    def get(self, key: str) -> JsonValue:
        with self._lock:
            text = self._pending.get(key) or self._writing.get(key)
            if text is None:
                text = self._reader.response(key)
        return None if text is None else loads_outside(text)  # a shared library's row is outside too

    def put(self, key: str, response: JsonValue, text: str | None = None) -> None:
        """Remember ``response``; ``text`` is its JSON as received (saves encoding it again)."""
        with self._lock:
            self._pending[key] = (
                text if text is not None else json_text(response)
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
        self._store.write(items, self.max_entries)
        with self._lock:
            for key in items:
                self._writing.pop(key, None)

    def flush(self) -> None:
        """Write everything remembered so far and wait until it is in the file."""
        self._submit().result()

    def close(self) -> None:
        self.flush()
        self._writer.shutdown(wait=True)
        with self._lock:
            self._reader.close()

    def clear(self) -> int:
        self.flush()
        return self._store.clear()
