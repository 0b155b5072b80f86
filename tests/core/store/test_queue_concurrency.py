"""Two reviewers (and one reviewer in two windows) labelling one queue at once: nothing lost.

Threads with a library connection each, released together by a barrier, on SQLite and on a real
PostgreSQL server (tests/pg.py); then separate processes on PostgreSQL, as a team's analysts are."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from at_once import at_once

from studio.core.models import Sample
from studio.core.store import Library

N = 25


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def _queue(location: Path | str) -> None:
    with Library.open(location) as lib:
        record = lib.datasets.create("d", [Sample(id=f"s{i}", completion=str(i)) for i in range(N)])
        lib.queues.create("q", record.id, [], {"rule": "random"}, [(f"s{i}", "") for i in range(N)],
                          labels_wanted=3, leads=["lea"])


def _label_all(location: Path | str, reviewer: str, verdict: str, note: str, barrier: threading.Barrier | None) -> None:
    with Library.open(location) as lib:
        if barrier is not None:
            barrier.wait()
        for i in range(N):
            lib.queues.put_label("q", f"s{i}", verdict, note, reviewer=reviewer)


def test_reviewers_labelling_at_once_lose_nothing(db_path: Path | str) -> None:
    _queue(db_path)
    writers = [("ann", "PASS", "ann 1"), ("bob", "FAIL", "bob"), ("cy", "NA", "cy"), ("ann", "FAIL", "ann 2")]
    errors = at_once(lambda who, verdict, note, barrier: _label_all(db_path, who, verdict, note, barrier), writers)
    assert errors == []
    with Library.open(db_path) as lib:
        labels = lib.queues.labels("q")
        assert all(set(labels[f"s{i}"]) == {"ann", "bob", "cy"} for i in range(N))
        assert {labels["s0"]["bob"].verdict, labels["s0"]["cy"].verdict} == {"FAIL", "NA"}
        for i in range(N):
            history = [h for h in lib.queues.history("q", f"s{i}") if h.reviewer == "ann"]
            # ann's two windows both wrote: two versions, numbered 1 and 2, neither lost
            assert sorted(h.version for h in history) == [1, 2]
            assert {h.note for h in history} == {"ann 1", "ann 2"}
        assert {p.reviewer: p.labelled for p in lib.queues.progress("q")} == {"ann": N, "bob": N, "cy": N}


SCRIPT = """
import sys
from studio.core.store import Library
location, reviewer, verdict = sys.argv[1:4]
with Library.open(location) as lib:
    for i in range({n}):
        lib.queues.put_label("q", f"s{{i}}", verdict, reviewer, reviewer=reviewer)
"""


def test_reviewer_processes_on_postgresql_lose_nothing(pg_url: str) -> None:
    _queue(pg_url)
    script = SCRIPT.format(n=N)
    procs = [subprocess.Popen([sys.executable, "-c", script, pg_url, who, verdict], stderr=subprocess.PIPE, text=True)
             for who, verdict in (("ann", "PASS"), ("bob", "FAIL"), ("cy", "PASS"))]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with Library.open(pg_url) as lib:
        labels = lib.queues.labels("q")
        assert sum(len(per) for per in labels.values()) == 3 * N
        assert all(per["bob"].verdict == "FAIL" and per["ann"].note == "ann" for per in labels.values())
