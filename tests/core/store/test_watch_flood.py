"""The live view's watcher under a flood of notifications on PostgreSQL: anyone who can connect may
NOTIFY its channel. Each look reads a bounded number, names only the lists of the tables it knows
(garbage, long or other programs' payloads are ignored) and each list once. Real PostgreSQL (tests/pg.py)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import psycopg

from studio.core.store import Library
from studio.core.store.watch import CHANNEL, LISTS, MAX_NOTIFIES_A_LOOK, LibraryWatcher

FLOOD = 10_000
GARBAGE = ["", "graders;DROP TABLE graders", "x" * 1000, "\u202egraders", "runs ", "GRADERS", "{\"table\": \"runs\"}"]


def test_ten_thousand_notifications_are_read_a_bounded_look_at_a_time(pg_url: str) -> None:
    library = Library.open(pg_url)
    watcher = LibraryWatcher(library)
    try:
        assert watcher.changes() == set()
        # unique payloads (PostgreSQL delivers identical ones of a transaction once); ours come last
        payloads = [f"{GARBAGE[i % len(GARBAGE)]}{i}" for i in range(FLOOD - 2)] + ["graders", "labels"]
        with psycopg.connect(pg_url, autocommit=True) as other, other.transaction():  # delivered at the commit
            for payload in payloads:
                other.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
        read: list[int] = []  # notifications read by each look
        real = watcher._conn.notifies

        def counted(**options: object) -> Iterator[object]:
            read.append(0)
            for note in real(**options):
                read[-1] += 1
                yield note

        watcher._conn.notifies = counted
        looks: list[set[str]] = []
        while len(looks) < 100_000 and not {"graders", "labels"} <= set().union(*looks):
            looks.append(watcher.changes())  # the window's timer, without the wait between looks
            if not looks[-1]:
                time.sleep(0.01)  # the rest of the flood is still on its way from the server
        assert set().union(*looks) == {"graders", "labels"}  # nothing from the garbage
        assert all(look <= set(LISTS) for look in looks)
        # bounded: no look read more than the bound, so the flood took at least as many looks
        assert sum(read) == FLOOD and max(read) <= MAX_NOTIFIES_A_LOOK
        assert len(looks) >= math.ceil(FLOOD / MAX_NOTIFIES_A_LOOK)
    finally:
        watcher.close()
        library.close()
