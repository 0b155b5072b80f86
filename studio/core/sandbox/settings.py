"""Knobs of the sandbox that do not belong to a grader definition (those are on FunctionGrader)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

IsolationMode = Literal["bubblewrap", "namespaces", "limits_only"]

NOBODY = 65534


class SandboxSettings(BaseModel):
    """``mode`` None picks the strongest isolation this machine offers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: IsolationMode | None = None
    uid: int = Field(default=NOBODY, description="uid the worker drops to when the studio is root")
    gid: int = NOBODY
    tmp_mb: int = Field(default=64, ge=1, description="size of the worker's private /tmp")
    file_size_mb: int = Field(default=32, ge=1, description="RLIMIT_FSIZE: largest file it may write")
    output_kib: int = Field(default=64, ge=1, description="largest result payload per sample")
    allow_unsandboxed: bool = Field(
        default=False, description="run function/bash graders without bubblewrap (the user's explicit opt-in)")
    seccomp: bool = True
    audit_hook: bool = True
    start_timeout: float = Field(default=10.0, gt=0)
    #: distributions whose installed modules (and their dependencies') a worker may import, mounted
    #: read-only (sandbox/packages.py); empty: the standard library only, as function graders have
    packages: tuple[str, ...] = ()


_allowed_by_user = False


def allow_unsandboxed(flag: bool) -> None:
    """The user's opt-in for this process (``run --allow-unsandboxed``, the window's setting): grader
    code may run in a fallback mode weaker than bubblewrap. Never set from a grader file."""
    global _allowed_by_user
    _allowed_by_user = bool(flag)


def unsandboxed_allowed(settings: SandboxSettings) -> bool:
    return settings.allow_unsandboxed or _allowed_by_user
