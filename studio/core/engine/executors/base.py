"""What every executor shares: the grading coroutine's signature, the protocol, the user's errors.

Its own module so that an executor (the Ray driver) imports it without importing the package that
picks the executor.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Protocol

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject
from studio.core.paths import extra_hint

if TYPE_CHECKING:
    from studio.core.engine.plan import RunPlan

#: the signature of the engine's grading loop (``runner._grade``) and of every executor's replacement:
#: (library, run_id, plan, ctx, pending, total, already, on_progress, cancel, streak) -> run metrics
#: a coroutine function: asyncio.run drives what it returns
GradeFn = Callable[..., Coroutine[object, object, dict[str, float]]]

RAY_HINT = extra_hint("Ray", "ray", "grade on a Ray cluster")


class ExecutorError(StudioError):
    """A sentence for the user: the cluster cannot be reached, or lost more than a run can survive."""


class Executor(Protocol):
    name: str

    def grade_fn(self, plan: RunPlan, local: GradeFn) -> GradeFn:
        """The coroutine that grades this run's plan (``engine.plan.RunPlan``: one grader, or a
        suite's): ``local`` (the engine's loop) or the executor's own."""
        ...

    def report(self) -> JsonObject:
        """What the run's aggregates record under ``executor``: where it ran, what was lost and re-run."""
        ...

    def close(self) -> None: ...
