"""Which protections are really active here, measured by a fresh worker reporting from inside.

``grader-studio sandbox-info`` and the window show this; on macOS/Windows only the limits and the
audit hook remain, and the report says so.
"""

from __future__ import annotations

import functools
import platform
import shutil
import sys

from pydantic import BaseModel, ConfigDict, Field

from studio.core.json_types import JsonArray

from .launch import detect_mode, is_root, namespaces_unavailable, plan_worker, refusal
from .process import WorkerDied, WorkerProcess
from .settings import IsolationMode, SandboxSettings


class Protection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    active: bool
    detail: str = ""


class SandboxInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    platform: str
    mode: IsolationMode
    bwrap: str | None = None
    studio_is_root: bool
    worker_uid: int | None = None
    #: "available", or why the fallback without bubblewrap (unshare + a private root) cannot run here
    namespaces_fallback: str = "available"
    protections: list[Protection] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def os_enforced(self) -> bool:
        names = {p.name for p in self.protections if p.active}
        return {"network", "filesystem", "environment"} <= names


def _list(value: object) -> JsonArray:
    """A list the probe reported; missing (or not a list) reads as empty."""
    return value if isinstance(value, list) else []


def _probe(settings: SandboxSettings) -> dict[str, object]:
    worker = WorkerProcess(plan_worker(settings, probe=True))
    try:
        ready = worker.wait_ready(settings.start_timeout)
    finally:
        worker.kill()
    report = ready.get("probe")
    return {**(report if isinstance(report, dict) else {}), "ready": ready}


@functools.lru_cache(maxsize=4)
def sandbox_info(settings: SandboxSettings | None = None) -> SandboxInfo:
    settings = settings or SandboxSettings()
    mode = settings.mode or detect_mode()
    info = SandboxInfo(
        platform=f"{platform.system()} {platform.release()} ({platform.machine()})",
        mode=mode,
        bwrap=shutil.which("bwrap"),
        studio_is_root=is_root(),
    )
    unavailable = namespaces_unavailable()
    if unavailable is not None:
        info.namespaces_fallback = f"unavailable: {unavailable}"
        if mode != "bubblewrap":  # it is the user's fallback: say why it is not there
            info.warnings.append(f"the namespaces fallback (unshare + a private root) is unavailable: {unavailable}")
    try:
        probe = _probe(settings)
    except (WorkerDied, OSError, ValueError) as exc:
        info.warnings.append(f"the sandbox worker does not start: {exc}")
        return info
    ready = probe.get("ready") or {}
    assert isinstance(ready, dict)
    uid = probe.get("uid")
    info.worker_uid = uid if isinstance(uid, int) else None
    env_keys = [k for k in _list(probe.get("env_keys")) if k not in ("HOME", "LANG", "PATH", "PWD", "LC_CTYPE", "TMPDIR")]
    interfaces = _list(probe.get("interfaces"))
    net_isolated = bool(probe.get("loopback_refused")) and set(interfaces) <= {"lo"}
    fs_hidden = not probe.get("home_visible") and not probe.get("etc_visible")
    add = info.protections.append
    add(Protection(name="network", active=net_isolated, detail="own network namespace, loopback refused" if net_isolated else "host network reachable"))
    add(Protection(name="filesystem", active=fs_hidden and not probe.get("root_writable"), detail="only the Python runtime, the shims and a private /tmp are visible" if fs_hidden else "host files visible (permissions still apply)"))
    add(Protection(name="environment", active=not env_keys, detail="empty environment" if not env_keys else f"variables visible: {', '.join(env_keys[:5])}"))
    pids = probe.get("visible_pids")
    add(Protection(name="processes", active=isinstance(pids, int) and pids <= 3, detail=f"own pid namespace ({pids} processes visible)" if isinstance(pids, int) and pids <= 3 else "host processes visible"))
    unprivileged = info.worker_uid not in (None, 0)
    add(Protection(name="unprivileged uid", active=unprivileged, detail=f"worker runs as uid {info.worker_uid}"))
    seccomp = probe.get("seccomp") == "2"
    add(Protection(name="seccomp", active=seccomp, detail="fork/exec/clone/ptrace, io_uring, namespaces, keyrings and mounts refused by the kernel" if seccomp else "not available"))
    add(Protection(name="no_new_privs", active=probe.get("no_new_privs") == "1", detail="setuid binaries gain nothing"))
    rlimits = sys.platform != "win32"
    add(Protection(name="rlimits", active=rlimits, detail="RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NPROC=0, RLIMIT_NOFILE" if rlimits else "no rlimits on Windows"))
    add(Protection(name="wall-time watchdog", active=True, detail="the studio kills a worker that makes no progress within the grader's timeout"))
    add(Protection(name="audit hook", active=settings.audit_hook, detail="second layer only: clear errors for subprocess/socket/ctypes calls"))
    if mode == "limits_only":
        info.warnings.append("no OS isolation on this platform: only resource limits and the audit hook apply; run untrusted graders on Linux with bubblewrap")
    elif mode == "namespaces":
        info.warnings.append("bubblewrap not found: the fallback (unshare + chroot) isolates network, processes and files, "
                             "but grader code only runs after an explicit opt-in (--allow-unsandboxed)")
    if reason := refusal(settings):
        info.warnings.append(reason)
    if info.studio_is_root and not unprivileged:
        info.warnings.append("the studio runs as root and the worker could not drop to an unprivileged uid")
    return info
