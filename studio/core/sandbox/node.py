"""Node workers for ``javascript`` graders: found, launched and probed like the Python workers.

A Node worker is planned exactly as a Python worker (``launch.plan_worker``: the same bubblewrap or
fallback root, the same refusal rules, the same uid drop) and then started through
``guest/node_main.py``, which puts the same rlimits and the Node seccomp policy on itself and execs
node with ``guest/js/harness.js``. The limits that Python sets at load time (memory, CPU) are set
before the exec here, so a pool of Node workers is made per limit set.

Which node: ``GRADER_STUDIO_NODE`` when set (a path; empty = none), else ``node`` on PATH.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from studio.core.json_types import JsonArray, JsonObject

from .launch import GUEST_MOUNT, LaunchPlan, SandboxRefused, plan_worker
from .pool import WorkerPool
from .process import WorkerDied, WorkerProcess
from .settings import SandboxSettings

#: address space node needs before any grader code (V8's code range and heap reservations)
NODE_BASE_MB = 1024
#: threads and processes of the worker's uid: node needs a few threads (RLIMIT_NPROC counts them);
#: process creation itself is refused by seccomp
NODE_NPROC = 128
NODE_ARGS = ("--v8-pool-size=1", "--no-addons")
NODE_ENV = {"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PATH": "/usr/bin", "UV_THREADPOOL_SIZE": "2",
            "NODE_OPTIONS": ""}


class NodeRuntime(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    version: str


def find_node() -> NodeRuntime | None:
    """The node executable graders run with and its version, or None when there is none."""
    configured = os.environ.get("GRADER_STUDIO_NODE")
    found = (configured or None) if configured is not None else shutil.which("node")
    if not found:
        return None
    return _runtime(os.path.realpath(found))


@functools.lru_cache(maxsize=4)
def _runtime(path: str) -> NodeRuntime | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20, env={})
    except (OSError, subprocess.SubprocessError):
        return None
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("v"):
        return None
    return NodeRuntime(path=path, version=version)


def missing_reason() -> str:
    return ("javascript graders need Node.js, and no node executable was found (install nodejs, or set "
            "GRADER_STUDIO_NODE to its path)")


def plan_node_worker(settings: SandboxSettings, *, memory_mb: int, cpu_seconds: int,
                     node: NodeRuntime | None = None) -> LaunchPlan:
    """The launch plan of one Node worker under ``settings`` (raises SandboxRefused as
    ``plan_worker`` does, and when there is no node)."""
    node = node or find_node()
    if node is None:
        raise SandboxRefused(missing_reason())
    plan = plan_worker(settings)
    config: JsonObject = json.loads(plan.argv[-1])
    config.update(
        node=node.path,
        node_args=[*NODE_ARGS, f"--max-old-space-size={memory_mb}"],
        env=NODE_ENV,
        as_bytes=(NODE_BASE_MB + memory_mb) * 1024 * 1024,
        cpu_seconds=cpu_seconds,
        nproc=NODE_NPROC,
    )
    script = plan.argv[-2]
    if not script.endswith("/worker_main.py"):  # pragma: no cover - plan_worker's own layout
        raise SandboxRefused("unexpected worker command line")
    argv = [*plan.argv[:-2], script[: -len("worker_main.py")] + "node_main.py", json.dumps(config)]
    if plan.mode == "bubblewrap" and not node.path.startswith("/usr/"):
        argv = _bind_outside_usr(argv, node.path)
    elif plan.mode == "namespaces" and not node.path.startswith("/usr/"):
        raise SandboxRefused(f"node ({node.path}) lies outside /usr, which the fallback sandbox does not mount; "
                             "install bubblewrap or a system nodejs")
    return LaunchPlan(argv, env=plan.env, cwd=plan.cwd, mode=plan.mode, drops_uid=plan.drops_uid,
                      cleanup=plan.cleanup)


def _bind_outside_usr(argv: list[str], node_path: str) -> list[str]:
    """bubblewrap binds node's installation (``<prefix>/bin/node``) read-only when it is not in /usr."""
    prefix = Path(node_path).parent.parent
    extra: list[str] = []
    for parent in reversed(prefix.parents):
        if str(parent) != "/":
            extra += ["--perms", "0755", "--dir", str(parent)]
    extra += ["--ro-bind", str(prefix), str(prefix)]
    at = argv.index("--proc")
    return argv[:at] + extra + argv[at:]


class NodePool(WorkerPool):
    """Fresh Node workers with one grader's limits (no spares kept warm: each worker is started
    when a session asks for it, and killed when it is released, as Python workers are)."""

    def __init__(self, size: int, settings: SandboxSettings, *, memory_mb: int, cpu_seconds: int) -> None:
        super().__init__(size, settings)
        self.memory_mb, self.cpu_seconds = memory_mb, cpu_seconds

    def _spawn(self) -> WorkerProcess:
        self.started += 1
        plan = plan_node_worker(self.settings, memory_mb=self.memory_mb, cpu_seconds=self.cpu_seconds)
        return self._spawner.submit(WorkerProcess, plan).result()

    def warm(self) -> None:
        return None


def cpu_limit(timeout: float) -> int:
    from .session import CPU_GRACE_SECONDS, RECYCLE_CPU_SECONDS

    return math.ceil(timeout) + int(RECYCLE_CPU_SECONDS) + CPU_GRACE_SECONDS


class NodeInfo(BaseModel):
    """What ``sandbox-info`` reports about Node workers, measured by starting one."""

    model_config = ConfigDict(extra="forbid")

    node: str | None = None
    version: str | None = None
    starts: bool = False
    seccomp: bool = False
    no_new_privs: bool = False
    landlock: bool = False
    uid: int | None = None
    policy: str = ("seccomp as Python workers, except clone for threads (CLONE_THREAD, no namespace flags); "
                   "fork, vfork, process clones and every execve after node's own refused; clone3 ENOSYS")
    rlimits: str = f"RLIMIT_AS = {NODE_BASE_MB} MB + the grader's memory, RLIMIT_CPU, RLIMIT_NPROC={NODE_NPROC}, RLIMIT_FSIZE, RLIMIT_NOFILE"
    problem: str | None = None


def node_info(settings: SandboxSettings | None = None) -> NodeInfo:
    settings = settings or SandboxSettings()
    node = find_node()
    if node is None:
        return NodeInfo(problem=missing_reason())
    info = NodeInfo(node=node.path, version=node.version)
    try:
        worker = WorkerProcess(plan_node_worker(settings, memory_mb=256, cpu_seconds=30, node=node))
    except SandboxRefused as exc:
        info.problem = str(exc)
        return info
    try:
        ready = worker.wait_ready(settings.start_timeout)
    except WorkerDied as exc:
        info.problem = str(exc)
        return info
    finally:
        worker.kill()
    if ready.get("error"):
        info.problem = str(ready["error"])
        return info
    uid = ready.get("uid")
    info.starts = True
    info.seccomp = ready.get("seccomp") is True
    info.no_new_privs = ready.get("no_new_privs") is True
    info.landlock = ready.get("landlock") is True
    info.uid = uid if isinstance(uid, int) else None
    return info


__all__ = ["GUEST_MOUNT", "NodeInfo", "NodePool", "NodeRuntime", "find_node", "node_info", "plan_node_worker"]


def check_javascript(source: str, form: str, function_name: str | None, origin: str | None = None,
                     settings: SandboxSettings | None = None) -> JsonArray:
    """``validate``'s checks of a javascript grader: Node is here, and the code loads in a Node
    worker (a syntax error, a module that throws or exports no function is named)."""
    from .validation import Check

    settings = settings or SandboxSettings()
    node = find_node()
    if node is None:
        return [Check(name="node", status="failed", message=missing_reason())]
    checks = [Check(name="node", status="passed", message=f"node {node.version} ({node.path})")]
    try:
        worker = WorkerProcess(plan_node_worker(settings, memory_mb=256, cpu_seconds=30, node=node))
    except SandboxRefused as exc:
        return [*checks, Check(name="sandbox", status="failed", message=str(exc))]
    try:
        reply = worker.load({"source": source, "form": form, "function": function_name, "origin": origin},
                            timeout=10, start_timeout=settings.start_timeout)
    except WorkerDied as exc:
        return [*checks, Check(name="sandbox", status="failed", message=str(exc))]
    finally:
        worker.kill()
    if reply.get("ok"):
        return [*checks, Check(name="loads", status="passed", message=f"the code loads (entry: {reply.get('entry')})")]
    return [*checks, Check(name=str(reply.get("stage") or "loads"), status="failed", message=str(reply.get("error")))]
