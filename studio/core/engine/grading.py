"""A run request graded in one call: checked, recorded, graded and concluded.

Why: a face (the CLI's ``run``) used to check the request, record the run, then come back to make
the executor, say where it grades and start grading, then ask the engine again to conclude. The
face now sets up what it owns first (how it prints, the cancel event, where the run's events go)
and hands the request over once: ``grade`` goes down from there, and the face prints what comes
back. A run that was recorded but could not start grading is concluded here, never left pending.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from .executors import make_executor
from .planning import plan_of
from .progress import Progress
from .request import Finished, RunRequest, conclude
from .runner import RunOptions, conclude_unstarted, execute_run

if TYPE_CHECKING:
    from studio.core.models import RunInfo
    from studio.core.store import Library

    from .executors import Executor


@dataclass(frozen=True)
class RunStarted:
    """The run is recorded and its executor ready; no sample is graded yet. Sent once, before the
    run's first ``Progress``: from then on a cancel stops the run (what is graded is kept)."""

    run_id: int
    total: int
    done: int
    #: where a cluster's executor grades (its header's sentence); None on this machine
    where: str | None = None


#: what a run being graded tells its listener: that it started, then its progress
RunEvent = RunStarted | Progress


def grade(library: Library, request: RunRequest, *, cancel: threading.Event,
          on_event: Callable[[RunEvent], None] | None = None, github: TextIO | None = None) -> Finished:
    """Check ``request`` (every refusal before a run exists), record or resume its run, grade it
    and conclude it (verdict, usage, report files; ``--github``'s lines to ``github``).
    ``on_event`` hears ``RunStarted`` then each ``Progress``; ``cancel`` stops the grading."""
    checked = request.check(library)
    info = request.start(library, checked)
    try:  # the row exists: an executor or a plan that cannot start concludes it, never leaves it pending
        executor, where = _executor(library, info)
        if on_event is not None:
            on_event(RunStarted(info.id, total=info.total, done=info.done, where=where))
        execute_run(library, info.id, on_progress=on_event, cancel=cancel, keep_going=request.keep_going or None,
                    executor=executor, retry_errors=request.retry_errors)
    except BaseException as exc:
        conclude_unstarted(library, info.id, exc, only_from=("pending",))  # execute_run concludes "running"
        raise
    return conclude(library, info.id, checked, github=github)


def _executor(library: Library, info: RunInfo) -> tuple[Executor, str | None]:
    """The run's executor, connected; and for a cluster, the sentence saying where it grades."""
    options = RunOptions.model_validate(info.settings)
    executor = make_executor(options.executor, options.ray_address)
    if options.executor == "local":
        return executor, None
    plan = plan_of(library, info, options.pass_threshold)
    return executor, executor.header(plan)  # type: ignore[attr-defined]  # joins the cluster if it grades there
