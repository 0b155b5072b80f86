"""The run child of ``grader-studio``, with the builtin scorer slowed down so a cancel lands mid-run.

The window grades in a child process (``studio.ui.runs.worker``), where a test's monkeypatch cannot
reach; tests point ``worker.child_command`` here instead: ``python slow_child.py --db PATH run ...``.
"""

from __future__ import annotations

import asyncio
import sys


def slow_down() -> None:
    from studio.core.graders import builtin

    original = builtin.BuiltinScorer.score_batch

    async def slow(self, batch):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.02)
        return await original(self, batch)

    builtin.BuiltinScorer.batch_size = 20  # type: ignore[misc]
    builtin.BuiltinScorer.score_batch = slow  # type: ignore[method-assign]


if __name__ == "__main__":
    slow_down()
    from studio.cli import main

    sys.exit(main())
