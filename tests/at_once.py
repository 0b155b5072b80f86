"""Writers released together: each in a thread of its own, started at one barrier, so their
transactions overlap as two analysts' (or one analyst's two windows') do."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any


def at_once(work: Callable[..., None], arguments: Sequence[tuple[Any, ...]]) -> list[BaseException]:
    """Run ``work(*args, barrier)`` for each ``args`` in a thread, all waiting on one barrier that
    ``work`` passes once its library is open; returns what the threads raised (empty: none)."""
    barrier = threading.Barrier(len(arguments))
    errors: list[BaseException] = []

    def one(args: tuple[Any, ...]) -> None:
        try:
            work(*args, barrier)
        except BaseException as exc:  # noqa: BLE001 (returned to the test, which shows them)
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(args,)) for args in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
