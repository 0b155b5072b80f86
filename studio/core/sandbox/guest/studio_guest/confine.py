"""The worker's own lock-down, applied before any grader code runs.

Kernel-enforced layers (they hold against a grader that rewrites the interpreter): dropping root to an
unprivileged uid, rlimits with hard == soft (an unprivileged process cannot raise them again), a
seccomp filter refusing process creation, ptrace, io_uring, namespaces, the kernel keyring and
mounts, and a non-dumpable process. The audit hook is
only a second layer that turns the obvious calls into clear errors.
"""

from __future__ import annotations

import os
import struct
import sys

try:
    import resource
except ImportError:  # Windows: no rlimits at all (sandbox-info says so)
    resource = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep typing out of the worker's start-up
    import ctypes

# syscall numbers refused by the seccomp filter, per architecture
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_BLOCKED = {
    # process creation and tracing: clone, fork, vfork, execve, ptrace, execveat, clone3,
    # process_vm_readv, process_vm_writev;
    # kernel side doors: io_uring_setup/enter/register (file and network I/O that bypasses this
    # filter), unshare and setns (new or other namespaces), add_key/request_key/keyctl (the uid's
    # kernel keyring is shared by every worker on the host), mount, umount2, pivot_root, chroot
    # (undoing the fallback's private /proc and root), open_by_handle_at, bpf, perf_event_open,
    # userfaultfd
    "x86_64": (56, 57, 58, 59, 101, 322, 435, 310, 311, 425, 426, 427, 272, 308, 248, 249, 250,
               165, 166, 155, 161, 304, 321, 298, 323),
    "aarch64": (220, 221, 117, 281, 435, 270, 271, 425, 426, 427, 97, 268, 217, 218, 219,
                40, 39, 41, 51, 265, 280, 241, 282),
}
_EPERM = 1


def drop_privileges(uid: int, gid: int) -> None:
    """Leave root for good: no supplementary groups, real/effective/saved ids all unprivileged."""
    if os.getuid() != 0:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def set_limit(name: str, value: int | None) -> None:
    """Lower one rlimit (soft == hard); raising is impossible afterwards for an unprivileged uid."""
    if value is None:
        return
    which = getattr(resource, name, None) if resource is not None else None
    if which is None:
        return
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def _libc() -> ctypes.CDLL:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def set_no_new_privs_and_nondumpable() -> bool:
    """No setuid gains through exec; no ptrace or /proc/pid/mem access from same-uid processes;
    killed with the process that started it (set after dropping root, which clears it)."""
    try:
        libc = _libc()
    except OSError:
        return False
    pr_set_pdeathsig, pr_set_dumpable, pr_set_no_new_privs = 1, 4, 38
    ok = int(libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0)) == 0  # a C int
    libc.prctl(pr_set_dumpable, 0, 0, 0, 0)
    libc.prctl(pr_set_pdeathsig, 9, 0, 0, 0)
    return ok


def install_seccomp() -> bool:
    """A classic-BPF filter: wrong architecture -> kill, blocked syscalls -> EPERM, rest allowed."""
    machine = os.uname().machine
    if sys.platform != "linux" or machine not in _AUDIT_ARCH:
        return False
    import ctypes

    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    allow, kill, errno = 0x7FFF0000, 0x80000000, 0x00050000 | _EPERM
    blocked = _BLOCKED[machine]
    prog: list[tuple[int, int, int, int]] = [
        (ld_w_abs, 0, 0, 4),  # A = arch
        (jeq_k, 1, 0, _AUDIT_ARCH[machine]),
        (ret_k, 0, 0, kill),
        (ld_w_abs, 0, 0, 0),  # A = syscall number
    ]
    if machine == "x86_64":  # x32 ABI numbers carry bit 30: refuse them all
        prog.append((jge_k, len(blocked) + 1, 0, 0x40000000))
    for n, nr in enumerate(blocked):
        prog.append((jeq_k, len(blocked) - n, 0, nr))
    prog.append((ret_k, 0, 0, allow))
    prog.append((ret_k, 0, 0, errno))
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog), ctypes.addressof(buf))
    libc = _libc()
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    return int(libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0)) == 0


_REFUSED_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "subprocess.Popen",
        "pty.spawn",
        "socket.connect",
        "socket.bind",
        "socket.getaddrinfo",
        "ctypes.dlopen",
    }
)


def install_audit_hook() -> None:
    """Second layer only: clear errors for the obvious escapes (bypassable; the OS layers are not)."""

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event in _REFUSED_EVENTS:
            raise PermissionError(f"sandbox: {event} is not allowed in a grader")

    sys.addaudithook(hook)


def status_field(name: str) -> str | None:
    """A field of /proc/self/status (Seccomp, NoNewPrivs ...), for the probe."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None
