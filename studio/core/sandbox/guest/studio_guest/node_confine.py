"""The seccomp policy of a Node worker: the Python worker's refusals, with threads allowed.

Node cannot run without threads (V8's platform workers, libuv's pool), so where the Python worker's
filter refuses ``clone`` outright this one lets ``clone`` through only when it makes a *thread*
(``CLONE_THREAD`` set, no namespace flag): fork, vfork and a process-making clone stay refused, so
``child_process`` cannot start anything. ``clone3`` answers ENOSYS (its flags sit behind a pointer a
filter cannot read), and libc falls back to ``clone``. ``execve`` is allowed for one call only in
effect: the filename pointer must be the launcher's own buffer (the exec of node itself); Node's
JavaScript has no way to call execve with that address, and every other exec is refused.
Everything else refused for Python graders (ptrace, io_uring, namespaces, keyrings, mounts, bpf ...)
is refused here too.
"""

from __future__ import annotations

import os
import struct
import sys

from .confine import _AUDIT_ARCH, _BLOCKED, _EPERM

_CLONE = {"x86_64": 56, "aarch64": 220}
_CLONE3 = {"x86_64": 435, "aarch64": 435}
_EXECVE = {"x86_64": 59, "aarch64": 221}
_ENOSYS = 38
CLONE_THREAD = 0x00010000
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _KILL = 0x7FFF0000, 0x80000000
_ERRNO = 0x00050000
_ARG0_LO, _ARG0_HI = 16, 20  # offsetof(struct seccomp_data, args[0]) and its high word (little-endian)


def program(machine: str, exec_addr: int) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions; built with labels, resolved to forward jumps."""
    clone, clone3, execve = _CLONE[machine], _CLONE3[machine], _EXECVE[machine]
    blocked = [nr for nr in _BLOCKED[machine] if nr not in (clone, clone3, execve)]
    ops: list[tuple[int, int | str, int | str, int]] = [
        (_LD_W_ABS, 0, 0, 4),
        (_JEQ_K, 0, "kill", _AUDIT_ARCH[machine]),
        (_LD_W_ABS, 0, 0, 0),
    ]
    if machine == "x86_64":
        ops.append((_JGE_K, "eperm", 0, 0x40000000))
    ops += [(_JEQ_K, "clone", 0, clone), (_JEQ_K, "enosys", 0, clone3), (_JEQ_K, "execve", 0, execve)]
    ops += [(_JEQ_K, "eperm", 0, nr) for nr in blocked]
    ops.append((_RET_K, 0, 0, _ALLOW))
    labels: dict[str, int] = {}

    def mark(name: str) -> None:
        labels[name] = len(ops)

    mark("clone")
    ops += [(_LD_W_ABS, 0, 0, _ARG0_LO), (_JSET_K, 0, "eperm", CLONE_THREAD),
            (_JSET_K, "eperm", 0, CLONE_NAMESPACES), (_RET_K, 0, 0, _ALLOW)]
    mark("execve")
    ops += [(_LD_W_ABS, 0, 0, _ARG0_LO), (_JEQ_K, 0, "eperm", exec_addr & 0xFFFFFFFF),
            (_LD_W_ABS, 0, 0, _ARG0_HI), (_JEQ_K, 0, "eperm", exec_addr >> 32), (_RET_K, 0, 0, _ALLOW)]
    mark("enosys")
    ops.append((_RET_K, 0, 0, _ERRNO | _ENOSYS))
    mark("eperm")
    ops.append((_RET_K, 0, 0, _ERRNO | _EPERM))
    mark("kill")
    ops.append((_RET_K, 0, 0, _KILL))
    out: list[tuple[int, int, int, int]] = []
    for at, (code, jt, jf, k) in enumerate(ops):
        def rel(target: int | str, at: int = at) -> int:
            if isinstance(target, str):
                offset = labels[target] - at - 1
                if not 0 <= offset < 256:  # pragma: no cover - the program is a few dozen lines
                    raise ValueError("seccomp jump out of range")
                return offset
            return target

        out.append((code, rel(jt), rel(jf), k))
    return out


def install(exec_addr: int) -> bool:
    """Install the Node policy on this process (inherited by node after the exec)."""
    machine = os.uname().machine
    if sys.platform != "linux" or machine not in _AUDIT_ARCH:
        return False
    import ctypes

    prog = program(machine, exec_addr)
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(22, 2, ctypes.byref(fprog), 0, 0)) == 0  # a C int


# Landlock (Linux 5.13+): which paths node may write to and execute from. Node runs after an exec,
# which makes it dumpable again, so without this it could open /proc/self/mem for writing and patch
# its own code; with it, writes are refused everywhere but the private /tmp and /dev/null, and only
# the system's program directories (and node's own) can be executed.
_LL_EXECUTE, _LL_WRITE_FILE, _LL_TRUNCATE, _LL_REFER = 1 << 0, 1 << 1, 1 << 14, 1 << 13
_LL_WRITES = _LL_WRITE_FILE | sum(1 << n for n in range(4, 13))  # remove dir/file, make char/dir/reg/...
_O_PATH, _O_CLOEXEC = 0o10000000, 0o2000000
_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}


def landlock(writable: list[str], writable_files: list[str], executable: list[str]) -> bool:
    """Restrict writes and execution to the given paths (True when the kernel enforces it)."""
    machine = os.uname().machine
    if sys.platform != "linux" or machine not in _LANDLOCK:
        return False
    import ctypes

    create, add_rule, restrict = _LANDLOCK[machine]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return False
    writes = _LL_WRITES | (_LL_REFER if abi >= 2 else 0) | (_LL_TRUNCATE if abi >= 3 else 0)
    attr = ctypes.create_string_buffer(struct.pack("=Q", writes | _LL_EXECUTE))
    ruleset = libc.syscall(create, attr, ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    file_writes = _LL_WRITE_FILE | (_LL_TRUNCATE if abi >= 3 else 0)
    rules = [(p, writes) for p in writable] + [(p, file_writes) for p in writable_files]
    rules += [(p, _LL_EXECUTE) for p in executable]
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, _O_PATH | _O_CLOEXEC)
            except OSError:
                continue  # not in this sandbox's root
            try:
                beneath = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd))
                if libc.syscall(add_rule, ruleset, ctypes.c_int(1), beneath, ctypes.c_uint32(0)) != 0:
                    return False
            finally:
                os.close(fd)
        return int(libc.syscall(restrict, ruleset, ctypes.c_uint32(0))) == 0  # a C long
    finally:
        os.close(ruleset)
