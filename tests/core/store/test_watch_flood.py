"""The live view's watcher under a flood of notifications on PostgreSQL: anyone who can connect may
NOTIFY its channel. Each look reads a bounded number, names only the lists of the tables it knows
(garbage, long or other programs' payloads are ignored) and each list once, and no notification
that names a list is lost. Real PostgreSQL (tests/pg.py)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import psycopg

from studio.core.store import Library
from studio.core.store.watch import CHANNEL, LISTS, MAX_NOTIFIES_A_LOOK, LibraryWatcher

FLOOD = 10_000
GARBAGE = ["", "graders;DROP TABLE graders", "x" * 1000, "\u202egraders", "runs ", "GRADERS", "{\"table\": \"runs\"}"]


def _counting(watcher: LibraryWatcher) -> list[int]:
    """The notifications each look of ``watcher`` reads from its connection, look by look."""
    read: list[int] = []
    real = watcher._server.notifies

    def counted(**options: object) -> Iterator[object]:
        read.append(0)
        for note in real(**options):
            read[-1] += 1
            yield note

    watcher._server.notifies = counted
    return read


def _flood(pg_url: str, payloads: list[str]) -> None:
    with psycopg.connect(pg_url, autocommit=True) as other, other.transaction():  # delivered at the commit
        for payload in payloads:
            other.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))


def _look_until(watcher: LibraryWatcher, read: list[int], wanted: set[str]) -> list[set[str]]:
    """Looks until one that read the end of what waited (fewer than the bound) and ``wanted`` seen."""
    looks: list[set[str]] = []
    while len(looks) < 100_000 and not (wanted <= set().union(*looks) and read[-1] < MAX_NOTIFIES_A_LOOK):
        looks.append(watcher.changes())  # the window's timer, without the wait between looks
        if not looks[-1]:
            time.sleep(0.01)  # the rest of the flood is still on its way from the server
    return looks


def test_ten_thousand_notifications_are_read_a_bounded_look_at_a_time(pg_url: str) -> None:
    library = Library.open(pg_url)
    watcher = LibraryWatcher(library)
    try:
        assert watcher.changes() == set()
        # unique payloads (PostgreSQL delivers identical ones of a transaction once); ours come last
        payloads = [f"{GARBAGE[i % len(GARBAGE)]}{i}" for i in range(FLOOD - 2)] + ["graders", "labels"]
        _flood(pg_url, payloads)
        # the watcher's connection does something else while the flood arrives (the server sends
        # a listener its notifications before the answer): all of it waits in the connection at once
        watcher._server.execute("SELECT 1")
        read = _counting(watcher)
        looks = _look_until(watcher, read, {"graders", "labels"})
        # bounded: the first look read the bound exactly, none read more, so the flood took many looks
        assert read[0] == MAX_NOTIFIES_A_LOOK and max(read) <= MAX_NOTIFIES_A_LOOK
        assert sum(read) == FLOOD and len(looks) >= math.ceil(FLOOD / MAX_NOTIFIES_A_LOOK)
        assert all(look <= set(LISTS) for look in looks)
        # a look cut short refreshes each list once (what the rest named is unknown); one that read
        # all that waited names only the lists named, never one from the garbage
        assert all(look == set(LISTS) for look, n in zip(looks, read, strict=True) if n == MAX_NOTIFIES_A_LOOK)
        assert all(look <= {"graders", "labels"} for look, n in zip(looks, read, strict=True) if n < MAX_NOTIFIES_A_LOOK)
    finally:
        watcher.close()
        library.close()


def test_garbage_alone_names_no_list(pg_url: str) -> None:
    """Notifications a look reads whole (none cut short) name only the lists they name: garbage none."""
    library = Library.open(pg_url)
    watcher = LibraryWatcher(library)
    try:
        _flood(pg_url, [f"{GARBAGE[i % len(GARBAGE)]}{i}" for i in range(100)] + ["runs"])
        watcher._server.execute("SELECT 1")
        read = _counting(watcher)
        looks = _look_until(watcher, read, {"runs"})
        assert set().union(*looks) == {"runs"} and sum(read) == 101
    finally:
        watcher.close()
        library.close()
