# expect: error
# message: Operation not permitted
# needs: audit-hook bypass

import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    os.posix_spawn("/bin/sh", ["sh", "-c", "true"], {})
    return 1.0
