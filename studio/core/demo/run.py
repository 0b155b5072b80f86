"""A first run of the demo judge, so a new demo library opens with its agreement view filled.

The demo's binary judge is graded on the labelled QA dataset by the scripted fake judge (served for
the occasion on its demo port unless one already listens there). Nothing here is a model.
"""

from __future__ import annotations

import contextlib
import socket

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import RunInfo
from studio.core.store import Library

DEMO_JUDGE = "qa-correctness-judge"
DEMO_DATASET = "qa"


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def seed_demo_run(library: Library, port: int) -> RunInfo | None:
    """Run the demo judge once on the demo QA dataset if it never ran there; None when it has."""
    if any(r.dataset == DEMO_DATASET for r in library.runs.list(grader_key=DEMO_JUDGE)):
        return None
    server = None
    if not _listening(port):
        from .fake_server import FakeJudgeServer

        server = FakeJudgeServer(port=port).start()
    try:
        return run_grader(library, DEMO_JUDGE, DEMO_DATASET, RunOptions())
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                server.stop()
