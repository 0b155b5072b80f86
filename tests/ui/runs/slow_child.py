"""The run child of ``grader-studio``, with the builtin scorer slowed down so a cancel lands mid-run.

The window grades in a child process (``studio.ui.runs.worker``), where a test's monkeypatch cannot
reach; tests point ``worker.child_command`` here instead: ``python slow_child.py --db PATH run ...``.
"""

from __future__ import annotations

import asyncio
import sys


def slow_down() -> None:
    """Every lane the built-in scorer grades through (samples, values, the text lane's column rows)
    pauses a little a batch, so the run cannot outpace a cancel however fast the lanes become."""
    from studio.core.graders import builtin

    def slowed(original):  # type: ignore[no-untyped-def]
        async def slow(self, batch):  # type: ignore[no-untyped-def]
            await asyncio.sleep(0.02)
            return await original(self, batch)
        return slow

    for lane in ("score_batch", "score_values", "score_texts"):
        setattr(builtin.BuiltinScorer, lane, slowed(getattr(builtin.BuiltinScorer, lane)))
    builtin.BuiltinScorer.batch_size = 20  # type: ignore[misc]


if __name__ == "__main__":
    slow_down()
    from studio.cli import main

    sys.exit(main())
