# expect: error
# message: system() returned
# needs: audit-hook bypass

import ctypes


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    rc = ctypes.CDLL(None).system(b"echo escaped > /tmp/escaped")
    if rc != 0:
        raise OSError(f"system() returned {rc}")
    return 1.0
