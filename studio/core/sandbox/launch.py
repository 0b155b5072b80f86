"""How a worker process is started on this machine: the command line for each isolation mode.

bubblewrap is preferred: new pid/net/ipc/uts namespaces, a root made of /usr (read-only), the Python
runtime (read-only), the guest code and a private tmpfs /tmp - nothing of the user's is mounted and
the environment is empty (a worker whose settings name ``packages`` also gets those, read-only,
under /packages: sandbox/packages.py). When the studio runs as root the worker drops to an unprivileged uid
inside, so RLIMIT_NPROC applies and root-only files stay unreadable; the runtime's parent
directories are recreated world-traversable inside the sandbox (a pyenv Python under /root works).
In the standalone app (a PyInstaller bundle) the runtime is the bundle's ``worker/`` folder and the
worker its ``grader-studio-worker`` executable: no Python of the machine is used.

Without bubblewrap, ``namespaces`` builds the same root with ``unshare`` and a short shell script
(private mount, pid, net, ipc and uts namespaces; a tmpfs root holding /usr, the runtime and the
guest read-only, a fresh /proc, a private /tmp) and ``chroot``s into it. Either fallback is refused
for grader code unless the user opted in (``allow_unsandboxed``), and no fallback ever runs a grader
as uid 0.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .packages import PACKAGES_MOUNT, visible_entries
from .settings import IsolationMode, SandboxSettings, unsandboxed_allowed

GUEST_DIR = Path(__file__).resolve().parent / "guest"
GUEST_MOUNT = "/sandbox"
_TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class SandboxRefused(RuntimeError):
    """Grader code may not run here as configured; the message says why and what to do."""


def refusal(settings: SandboxSettings) -> str | None:
    """Why grader code would not start under ``settings`` on this machine, or None."""
    mode = settings.mode or detect_mode()
    if mode != "bubblewrap" and not unsandboxed_allowed(settings):
        return (f"function and bash graders are refused: bubblewrap is not available, so the sandbox would "
                f"run in the weaker '{mode}' mode (see `grader-studio sandbox-info`); install bubblewrap, "
                "or opt in with --allow-unsandboxed (Settings > Allow unsandboxed graders in the window)")
    return None


@dataclass
class LaunchPlan:
    """Everything Popen needs; ``cleanup`` holds host temp dirs to remove when the worker ends."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None = None
    mode: IsolationMode = "limits_only"
    drops_uid: bool = False
    cleanup: list[str] = field(default_factory=list)


#: the standalone app's worker executable, next to the app's own (packaging/grader-studio.spec)
FROZEN_WORKER = Path("worker") / "grader-studio-worker"


def frozen_worker() -> Path | None:
    """The bundle's worker executable when the studio is a frozen app (PyInstaller), else None.

    A frozen app has no interpreter a script can be handed to, and the machine may have no Python
    at all: the bundle ships a second executable, ``worker_main.py`` frozen with the standard
    library alone, in a directory of its own that the sandbox mounts read-only as the runtime.
    """
    if not getattr(sys, "frozen", False):
        return None
    return Path(os.path.realpath(sys.executable)).parent / FROZEN_WORKER


@functools.lru_cache(maxsize=1)
def _runtime() -> tuple[str, str, str]:
    """(interpreter, installation prefix, "pythonX.Y") of the Python that runs the workers.

    Normally the studio's own runtime (the real binary behind a venv); in a frozen app, the
    bundle's worker executable and its directory.
    """
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    worker = frozen_worker()
    if worker is not None:
        return str(worker), str(worker.parent), version
    exe = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    if not exe.startswith(prefix + os.sep):
        candidate = Path(prefix, "bin", version)
        if candidate.exists():
            exe = str(candidate)
    return exe, prefix, version


def worker_command(exe: str, guest: str, config: dict[str, object]) -> list[str]:
    """The worker's command line: the runtime on ``worker_main.py`` in ``guest`` (as the worker
    sees it), or the frozen worker executable, which is ``worker_main.py`` already."""
    if frozen_worker() is not None:
        return [exe, json.dumps(config)]
    return [exe, "-I", "-S", f"{guest}/worker_main.py", json.dumps(config)]


def python_runtime() -> tuple[str, str]:
    """(interpreter, prefix to mount): the real binary behind a venv, and its installation."""
    exe, prefix, _version = _runtime()
    return exe, prefix


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _world_readable(path: str) -> bool:
    """Can an unrelated uid reach and read ``path`` (every parent traversable)?"""
    current = Path(path)
    try:
        if not current.stat().st_mode & stat.S_IROTH:
            return False
        return all(p.stat().st_mode & stat.S_IXOTH for p in current.parents)
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def detect_mode() -> IsolationMode:
    """The strongest mode that actually starts here (each is tried once with ``true``)."""
    if not sys.platform.startswith("linux"):
        return "limits_only"
    if shutil.which("bwrap") and _works(_bwrap_prefix(probe=True) + ["true"]):
        return "bubblewrap"
    if namespaces_unavailable() is None:
        return "namespaces"
    return "limits_only"


@functools.lru_cache(maxsize=1)
def namespaces_unavailable() -> str | None:
    """Why the ``namespaces`` fallback cannot start on this machine (a sentence), or None when it
    can. Probed once per process with the whole fallback (unshare, then the private root's mounts)
    running ``true``: a container's kernel often allows the namespaces and refuses a mount, and only
    the full launch tells."""
    if not sys.platform.startswith("linux"):
        return "it needs Linux"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    try:
        result = subprocess.run(_namespaces_argv(["true"], SandboxSettings()), env={}, capture_output=True,
                                timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unshare does not start ({exc})"
    if result.returncode == 0:
        return None
    said = [line.strip() for line in result.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    detail = said[-1][:200] if said else f"exit status {result.returncode}"
    return f"this kernel refuses it ({detail}), as containers often do"


def _works(argv: list[str]) -> bool:
    try:
        result = subprocess.run(argv, env={}, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def _bwrap_prefix(settings: SandboxSettings | None = None, probe: bool = False) -> list[str]:
    settings = settings or SandboxSettings()
    exe, prefix = python_runtime()
    argv = [shutil.which("bwrap") or "bwrap"]
    if is_root():
        # no user namespace: the worker is a real unprivileged uid on the host (NPROC counts),
        # it keeps CAP_SETUID/SETGID only until it drops root itself at start
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        argv += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv += ["--unshare-all", "--unshare-user", "--disable-userns"]
    argv += ["--die-with-parent", "--new-session", "--clearenv"]
    argv += ["--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8", "--setenv", "PATH", "/usr/bin"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for top in _TOP_LEVEL:
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    if not probe:
        argv += ["--ro-bind", str(GUEST_DIR), GUEST_MOUNT]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "01777", "--size", str(settings.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    # the runtime after /tmp: a standalone app unpacked under /tmp stays visible over the private one
    if not prefix.startswith("/usr/"):
        parents = [str(p) for p in reversed(Path(prefix).parents) if str(p) != "/"]
        for parent in parents:
            argv += ["--perms", "0755", "--dir", parent]
        argv += ["--ro-bind", prefix, prefix]
    for hidden in third_party_dirs(prefix):  # stdlib only: installed packages stay out of reach
        argv += ["--perms", "0555", "--size", "4096", "--tmpfs", hidden]
    entries = () if probe else _packages(settings)
    if entries:  # the allowed packages alone, one read-only mount each (sandbox/packages.py)
        argv += ["--perms", "0755", "--dir", PACKAGES_MOUNT]  # bwrap's own parents are 0700 as root
        for path in entries:
            argv += ["--ro-bind", path, f"{PACKAGES_MOUNT}/{os.path.basename(path)}"]
    argv += ["--remount-ro", "/", "--chdir", "/tmp"]  # the root tmpfs is unbounded: keep it read-only
    return argv


def _packages(settings: SandboxSettings) -> tuple[str, ...]:
    """Host paths of the packages ``settings`` lets a worker import (sandbox/packages.py). None in
    the standalone app: its worker is frozen with the standard library alone, and the app's own
    packages are not a site-packages a worker's interpreter could load."""
    if not settings.packages or frozen_worker() is not None:
        return ()
    return visible_entries(settings.packages)


def third_party_dirs(prefix: str) -> list[str]:
    """site-/dist-packages of the runtime and of /usr: mounted over with an empty directory."""
    version = _runtime()[2]
    candidates = {
        f"{prefix}/lib/{version}/site-packages",
        f"{prefix}/lib64/{version}/site-packages",
        "/usr/lib/python3/dist-packages",
        f"/usr/lib/{version}/site-packages",
        f"/usr/local/lib/{version}/dist-packages",
        f"/usr/local/lib/{version}/site-packages",
    }
    return sorted(p for p in candidates if os.path.isdir(p) and not os.path.islink(p))


def _unshare_prefix() -> list[str]:
    argv = [_tool("unshare"), "--mount", "--net", "--ipc", "--uts", "--pid", "--fork"]
    argv += ["--kill-child", "--mount-proc"]
    if not is_root():
        argv += ["--user", "--map-root-user"]
    return argv


# Runs as (namespace) root inside ``unshare``: builds a root of its own on a tmpfs and chroots into it.
# $1 = tmp size in MiB, $2 = runtime prefix, $3 = guest dir, $4 = space-separated dirs to hide, $5 =
# where to build the root (a directory holding neither $2 nor $3: the tmpfs hides what was there), $6 =
# newline-separated host paths shown read-only under /packages (sandbox/packages.py); then the command.
# Everything is mounted read-only except the private /tmp.
_CHROOT_SCRIPT = r"""
set -e
umask 022
R="$5"
mount -t tmpfs -o mode=0755,size=1m tmpfs "$R"
mkdir -p "$R/usr" "$R/proc" "$R/dev" "$R/tmp" "$R/sandbox"
mount --bind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"
for top in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$top" ]; then ln -s "$(readlink "/$top")" "$R/$top"
  elif [ -d "/$top" ]; then mkdir "$R/$top"; mount --bind "/$top" "$R/$top"; mount -o remount,bind,ro "$R/$top"; fi
done
mount --bind "$3" "$R/sandbox"; mount -o remount,bind,ro "$R/sandbox"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
mount -t tmpfs -o mode=0755,size=64k tmpfs "$R/dev"
for n in null zero full random urandom; do touch "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done
mount -t tmpfs -o mode=1777,nosuid,nodev,size="$1"m tmpfs "$R/tmp"
# the runtime after /tmp: a standalone app unpacked under /tmp stays visible over the private one
case "$2" in /usr/*) ;; *) mkdir -p "$R$2"; mount --bind "$2" "$R$2"; mount -o remount,bind,ro "$R$2";; esac
for d in $4; do mount -t tmpfs -o ro,mode=0555,size=4k tmpfs "$R$d"; done
if [ -n "$6" ]; then
  mkdir -p "$R/packages"
  printf '%s\n' "$6" | while IFS= read -r p; do
    d="$R/packages/${p##*/}"
    if [ -d "$p" ]; then mkdir "$d"; else touch "$d"; fi
    mount --bind "$p" "$d"; mount -o remount,bind,ro "$d"
  done
fi
mount -o remount,ro "$R"
shift 6
# not exec: this shell stays pid 1 of the namespace (root, out of the grader's reach; it reaps)
"$(command -v chroot || echo /usr/sbin/chroot)" "$R" /usr/bin/env -C /tmp "$@"
"""


def _namespaces_argv(command: list[str], settings: SandboxSettings, packages: tuple[str, ...] = ()) -> list[str]:
    """``command`` inside fresh namespaces and a root holding only the runtime (the fallback's
    stand-in for bubblewrap); paths in ``command`` are as seen inside (the guest is /sandbox), the
    ``packages`` entries under /packages."""
    _exe, prefix = python_runtime()
    hidden = " ".join(third_party_dirs(prefix))
    return _unshare_prefix() + ["/bin/sh", "-c", _CHROOT_SCRIPT, "sandbox", str(settings.tmp_mb), prefix,
                                str(GUEST_DIR), hidden, _staging_dir(prefix, str(GUEST_DIR)), "\n".join(packages),
                                *command]


def _staging_dir(*inside: str) -> str:
    """Where the fallback builds its root: /tmp, unless the runtime or the guest lives under it (a
    standalone app unpacked in /tmp), then another directory of the host that holds neither."""
    for candidate in ("/tmp", "/mnt", "/media", "/srv", "/opt", "/var/tmp", "/run"):
        if os.path.isdir(candidate) and not any(p == candidate or p.startswith(candidate + "/") for p in inside):
            return candidate
    return "/tmp"


@functools.lru_cache(maxsize=1)
def ensure_bytecode() -> None:
    """Compile the guest code once on the host: workers cannot write .pyc files, and compiling
    the loop again in every worker would add milliseconds to each start."""
    if frozen_worker() is not None:  # the frozen worker's code is compiled into its executable
        return
    import compileall

    with contextlib.suppress(OSError):
        compileall.compile_dir(str(GUEST_DIR), quiet=2)


def plan_worker(settings: SandboxSettings, *, probe: bool = False) -> LaunchPlan:
    """The command line of one worker under the configured (or detected) isolation mode; raises
    ``SandboxRefused`` when grader code may not run here (a probe runs none, it always starts)."""
    mode = settings.mode or detect_mode()
    if not probe and (reason := refusal(settings)):
        raise SandboxRefused(reason)
    ensure_bytecode()
    exe, _prefix = python_runtime()
    config: dict[str, object] = {
        "nproc": 0,
        "fsize": settings.file_size_mb * 1024 * 1024,
        "seccomp": settings.seccomp,
        "audit_hook": settings.audit_hook,
        "probe": probe,
    }
    packages = () if probe else _packages(settings)
    if packages:
        config["packages"] = PACKAGES_MOUNT
    if mode == "bubblewrap":
        if is_root():
            config.update(uid=settings.uid, gid=settings.gid)
        config["own_pid_ns"] = True
        argv = _bwrap_prefix(settings) + worker_command(exe, GUEST_MOUNT, config)
        return LaunchPlan(argv, env={}, mode=mode, drops_uid=is_root())
    if is_root():
        config.update(uid=settings.uid, gid=settings.gid)  # never a grader as uid 0
    if mode == "namespaces":
        config["own_pid_ns"] = True
        argv = _namespaces_argv(worker_command(exe, GUEST_MOUNT, config), settings, packages)
        env = {"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
        return LaunchPlan(argv, env=env, cwd="/", mode=mode, drops_uid=is_root())
    readable = _world_readable(exe) and (frozen_worker() is not None
                                         or _world_readable(str(GUEST_DIR / "worker_main.py")))
    if is_root() and not readable and probe:  # the probe runs only our own code: report, do not refuse
        config.pop("uid", None)
        config.pop("gid", None)
    elif is_root() and not readable:
        raise SandboxRefused(
            f"the studio runs as root and the Python runtime ({exe}) is not readable by uid {settings.uid}: a "
            "grader would run as root, which is refused; install bubblewrap or unshare (util-linux)")
    workdir = tempfile.mkdtemp(prefix="grader-sandbox-")
    drops = "uid" in config
    if drops:
        os.chown(workdir, settings.uid, settings.gid)
    config["own_pid_ns"] = False
    cleanup = [workdir]
    if packages:  # no mounts without namespaces: a directory of links to the allowed entries alone
        farm = tempfile.mkdtemp(prefix="grader-packages-")
        os.chmod(farm, 0o755)
        for path in packages:
            os.symlink(path, os.path.join(farm, os.path.basename(path)))
        config["packages"] = farm
        cleanup.append(farm)
    argv = worker_command(exe, str(GUEST_DIR), config)
    env = {"HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8"}
    return LaunchPlan(argv, env=env, cwd=workdir, mode=mode, drops_uid=drops, cleanup=cleanup)


def _tool(name: str) -> str:
    """A program's real path (a PATH entry may be a link outside the sandbox's root; /usr is inside)."""
    found = shutil.which(name)
    return os.path.realpath(found) if found else name


def plan_command(command: list[str], settings: SandboxSettings, env: dict[str, str], *,
                 cpu_seconds: int, memory_mb: int, nproc: int = 64) -> LaunchPlan:
    """An arbitrary program (a bash grader's ``bash -lc``) under the same isolation as a worker.

    The program cannot confine itself as our Python worker does, so the limits are put on from the
    outside: ``prlimit`` sets them and, when the studio is root, ``setpriv`` drops to the
    unprivileged uid first so RLIMIT_NPROC counts.
    """
    mode = settings.mode or detect_mode()
    if reason := refusal(settings):
        raise SandboxRefused(reason)
    limits = [_tool("prlimit"), f"--cpu={cpu_seconds}",
              f"--as={memory_mb * 1024 * 1024}", f"--fsize={settings.file_size_mb * 1024 * 1024}",
              f"--nproc={nproc}", "--core=0", "--"]
    drop: list[str] = []
    if is_root():
        if not shutil.which("setpriv"):
            raise SandboxRefused("the studio runs as root and setpriv (util-linux) is missing: a bash grader "
                                 "would run as root, which is refused")
        drop = [_tool("setpriv"), f"--reuid={settings.uid}", f"--regid={settings.gid}",
                "--clear-groups", "--no-new-privs", "--"]
    if mode == "bubblewrap":
        # ``env`` reaches the command through bwrap's own environment, never its command line:
        # /proc/PID/cmdline is readable by every user of the host (and argv is length-capped).
        # The environment handed to bwrap is exactly ``env`` (the caller passes it, nothing is
        # inherited), so dropping --clearenv lets only these variables through, under the fixed ones.
        # (A bash grader passes none: its sample comes on standard input, graders/bash.py.)
        argv = [arg for arg in _bwrap_prefix(settings, probe=True) if arg != "--clearenv"]
        return LaunchPlan(argv + drop + limits + command, env=dict(env), mode=mode, drops_uid=bool(drop))
    if mode == "namespaces":
        base = {"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
        return LaunchPlan(_namespaces_argv(drop + limits + command, settings), env=base | env, cwd="/",
                          mode=mode, drops_uid=bool(drop))
    workdir = tempfile.mkdtemp(prefix="grader-bash-")
    if drop:
        os.chown(workdir, settings.uid, settings.gid)
    base = {"HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
    return LaunchPlan(drop + limits + command, env=base | env, cwd=workdir, mode=mode,
                      drops_uid=bool(drop), cleanup=[workdir])
