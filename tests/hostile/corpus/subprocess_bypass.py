# expect: error
# message: Operation not permitted
# needs: audit-hook bypass

import subprocess


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    subprocess.run(["/bin/sh", "-c", "echo escaped"], check=True)
    return 1.0
