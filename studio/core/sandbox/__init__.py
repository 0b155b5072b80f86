"""The function-grader sandbox: isolated warm workers, the platforms' shims, validation.

Public API: ``make_scorer`` (engine), ``validate`` / ``detect_contract`` (CLI validate, editor),
``sandbox_info`` (CLI sandbox-info, window), ``shared_pool`` / ``close_shared_pool``.
"""

from .info import Protection, SandboxInfo, sandbox_info
from .pool import WorkerPool, close_shared_pool, shared_pool
from .settings import SandboxSettings
from .validation import Check, detect_contract, validate

__all__ = [
    "Check",
    "Protection",
    "SandboxInfo",
    "SandboxSettings",
    "WorkerPool",
    "close_shared_pool",
    "detect_contract",
    "sandbox_info",
    "shared_pool",
    "validate",
]
