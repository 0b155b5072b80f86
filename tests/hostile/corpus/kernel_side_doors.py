# expect: error
# message: every side door refused
# needs: audit-hook bypass
# io_uring, namespaces, setns and the kernel keyring, called with arguments the kernel itself would
# answer with something else than EPERM: EPERM means the seccomp filter refused the call.
import ctypes
import os

NUMBERS = {
    "x86_64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "unshare": 272,
               "setns": 308, "keyctl": 250, "request_key": 249},
    "aarch64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "unshare": 97,
                "setns": 268, "keyctl": 219, "request_key": 218},
}
ARGS = {
    "io_uring_setup": (0, None),             # kernel: EINVAL/EFAULT
    "io_uring_enter": (-1, 0, 0, 0, None, 0),  # kernel: EBADF
    "io_uring_register": (-1, 0, None, 0),   # kernel: EBADF
    "unshare": (0,),                         # kernel: success (a no-op)
    "setns": (-1, 0),                        # kernel: EBADF
    "keyctl": (0, -4, 0),                    # KEYCTL_GET_KEYRING_ID of the user keyring: success
    "request_key": (b"user", b"grader-studio-none", None, 0),  # kernel: ENOKEY
}


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    open_doors = []
    for name, number in NUMBERS[os.uname().machine].items():
        ctypes.set_errno(0)
        rc = libc.syscall(number, *ARGS[name])
        if rc != -1 or ctypes.get_errno() != 1:
            open_doors.append(f"{name} (rc {rc}, errno {ctypes.get_errno()})")
    if open_doors:
        raise RuntimeError("reached the kernel: " + ", ".join(open_doors))
    raise PermissionError("every side door refused")
