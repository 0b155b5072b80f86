"""What others changed in the library, asked without blocking (the window's live view, docs/team.md).

The window asks ``changes()`` a few times a second and refreshes only the lists named. On SQLite a
private connection's ``PRAGMA data_version`` moves when any other connection (another process, or
this one's pool) commits; then a signature per list (counts, newest ids and times) says which lists
moved, so the results a run writes every tenth of a second refresh nothing. On PostgreSQL the
migration's triggers ``NOTIFY grader_studio`` with the table's name; the watcher ``LISTEN``s on
its own autocommit connection and reads what arrived, without waiting.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the library imports every repository
    import psycopg
    from psycopg.rows import TupleRow

    from .library import Library

from studio.core.json_types import JsonObject

from . import file_guard

#: a list of the window -> the tables whose changes it shows
LISTS: dict[str, tuple[str, ...]] = {
    "graders": ("graders",),
    "suites": ("suites",),
    "runs": ("runs",),
    "datasets": ("datasets",),
    "labels": ("label_sets", "labels"),
    "endpoints": ("endpoints",),
    "queues": ("review_queues", "queue_labels", "queue_settlements"),  # others' review progress
}

#: per table, a cheap query whose answer moves with every change that table's list shows
_SIGNATURES: dict[str, str] = {
    "graders": "SELECT count(*), max(updated_at) FROM graders",
    "suites": "SELECT count(*), max(updated_at) FROM suites",
    "runs": "SELECT count(*), max(id), count(finished_at), max(finished_at), "
            "sum(CASE WHEN status = 'running' THEN 1 ELSE 0 END) FROM runs",
    "datasets": "SELECT count(*), max(id), max(created_at), count(deleted_at) FROM datasets",
    "label_sets": "SELECT count(*), max(id), sum(coalesce(scale_min, 0) + coalesce(scale_max, 0)) FROM label_sets",
    "labels": "SELECT count(*), max(id) FROM labels",
    "endpoints": "SELECT count(*), max(updated_at) FROM endpoints",
    "review_queues": "SELECT count(*), max(id), sum(length(assignees) + length(leads) + length(runs) + length(derived)) FROM review_queues",
    "queue_labels": "SELECT count(*), max(id) FROM queue_labels",
    "queue_settlements": "SELECT count(*), max(id) FROM queue_settlements",
}

CHANNEL = "grader_studio"

#: notifications read in one look at most: anyone who may connect can NOTIFY the channel, and a
#: flood must not hold the window's thread; the rest wait in the connection for the next looks
#: (each look coalesces what it read into the names of the lists to refresh, once each). psycopg's
#: own ``stop_after`` is no bound: it is checked only between packets, and notifications that
#: arrived while the connection did something else come in one batch of any length.
MAX_NOTIFIES_A_LOOK = 500


def _lists_of(tables: set[str]) -> set[str]:
    return {name for name, owned in LISTS.items() if tables.intersection(owned)}


class LibraryWatcher:
    """``changes()``: the names of ``LISTS`` changed since the previous call (never blocks long)."""

    def __init__(self, library: Library) -> None:
        self._library = library
        #: the library file's own read-only connection (SQLite), or the server's LISTEN one (PostgreSQL)
        self._sqlite: sqlite3.Connection | None = None
        self._server: psycopg.Connection[TupleRow] | None = None
        self._version: int | None = None
        self._signatures: JsonObject = {}
        self._released: Callable[[], object] | None = None
        if library.is_server:
            import psycopg

            # the engine's own connection arguments (host, user, password ... as keywords, so a
            # password with a blank or a '%' reaches libpq as it is); the password stays in memory
            engine = library.engine
            _args, params = engine.dialect.create_connect_args(engine.url)
            self._server = psycopg.connect(**{**params, "autocommit": True, "connect_timeout": 10})
            self._server.execute(f"LISTEN {CHANNEL}")
        elif library.path is not None:
            # a SQLite connection of its own, never a read of the file (file_guard)
            path = library.path.resolve()
            self._sqlite = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
            file_guard.hold(path)
            self._released = weakref.finalize(self, file_guard.release, path)
            self._version = self._data_version()
            self._signatures = self._read_signatures()

    def _data_version(self) -> int:
        assert self._sqlite is not None  # asked of a SQLite library only
        return int(self._sqlite.execute("PRAGMA data_version").fetchone()[0])

    def _read_signatures(self) -> JsonObject:
        assert self._sqlite is not None  # asked of a SQLite library only
        out = {}
        for table, sql in _SIGNATURES.items():
            out[table] = tuple(self._sqlite.execute(sql).fetchone())
        return out

    def changes(self) -> set[str]:
        if self._server is None and self._sqlite is None:
            return set()
        if self._server is not None:  # a server library (its LISTEN connection)
            # a payload that is no table of ours (garbage, another program's) names no list: ignored
            notes = self._server.notifies(timeout=0, stop_after=MAX_NOTIFIES_A_LOOK)
            try:
                read = list(itertools.islice(notes, MAX_NOTIFIES_A_LOOK))
            finally:
                notes.close()  # the rest stays in the connection's backlog for the next look...
            if len(read) == MAX_NOTIFIES_A_LOOK:
                # ...except the rest of a packet cut short, whose names are unknown: every list
                # refreshes once (a flood costs at most one refresh of each a look, never a missed one)
                return set(LISTS)
            return _lists_of({note.payload for note in read})
        version = self._data_version()
        if version == self._version:
            return set()
        self._version = version
        signatures = self._read_signatures()
        moved = {table for table, value in signatures.items() if self._signatures.get(table) != value}
        self._signatures = signatures
        return _lists_of(moved)

    def close(self) -> None:
        conn = self._sqlite or self._server
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
            self._sqlite = self._server = None
            if self._released is not None:
                self._released()
