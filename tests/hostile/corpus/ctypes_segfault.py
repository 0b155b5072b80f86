# expect: error
# message: SIGSEGV
# needs: audit-hook bypass

import ctypes


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    ctypes.c_char.from_address(8).value
    return 1.0
