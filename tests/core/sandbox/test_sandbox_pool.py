"""The warm pool: spares survive the thread that asked for them, and used workers never return."""

from __future__ import annotations

import threading
import time

from studio.core.sandbox.pool import WorkerPool


def test_spares_started_from_a_short_lived_thread_stay_alive() -> None:
    # bubblewrap's --die-with-parent follows the starting *thread*: the pool must start
    # workers from its own thread, not from the (short-lived) executor thread of a scorer
    pool = WorkerPool(size=1)
    try:
        thread = threading.Thread(target=pool.warm)
        thread.start()
        thread.join()
        time.sleep(0.3)
        worker = pool.acquire()
        assert worker.wait_ready(10)["op"] == "ready"
        assert worker.alive
    finally:
        pool.close()


def test_a_released_worker_is_killed_and_replaced_by_a_fresh_spare() -> None:
    pool = WorkerPool(size=1)
    try:
        pool.warm()
        first = pool.acquire()
        first.wait_ready(10)
        pool.release(first)
        assert not first.alive
        second = pool.acquire()
        assert second is not first and second.wait_ready(10)["pid"] >= 1
        assert pool.started == 2
    finally:
        pool.close()
    assert not second.alive
