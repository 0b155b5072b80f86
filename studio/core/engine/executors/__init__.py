"""Where a run's samples are graded: this machine (the engine's own loop) or a Ray cluster.

``execute_run`` asks an executor for the grading coroutine of a run (``grade_fn``). The local executor
hands back the engine's own loop unchanged; the Ray executor hands back a loop that sends blocks of
samples to actors on the cluster's nodes and writes what comes back, the driver staying the single
writer of the library. Ray is an optional extra, imported only when a run asks for it.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject

from .base import RAY_HINT, Executor, ExecutorError, GradeFn

if TYPE_CHECKING:
    from studio.core.engine.plan import RunPlan


class LocalExecutor:
    """This machine: the engine's own batches, sandbox pool and writer."""

    name = "local"

    def grade_fn(self, plan: RunPlan, local: GradeFn) -> GradeFn:
        return local

    def report(self) -> JsonObject:
        return {"executor": "local"}

    def close(self) -> None:
        return None


def ray_available() -> bool:
    """Is Ray importable here (without paying for the import)?"""
    return importlib.util.find_spec("ray") is not None


def make_executor(executor: str | None, ray_address: str | None = None) -> Executor:
    """The executor a run's settings name (``local`` when none); a missing Ray is a sentence."""
    if executor in (None, "local"):
        return LocalExecutor()
    if executor == "ray":
        if not ray_available():
            raise ExecutorError(RAY_HINT)
        from .ray_driver import RayExecutor

        return RayExecutor(address=ray_address)
    raise ExecutorError(f"unknown executor {executor!r}: choose 'local' or 'ray'")


__all__ = ["RAY_HINT", "Executor", "ExecutorError", "GradeFn", "LocalExecutor", "make_executor", "ray_available"]
