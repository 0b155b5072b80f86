# expect: error
# message: Errno
# needs: audit-hook bypass

import socket


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    socket.create_connection(("127.0.0.1", thread.metadata["port"]), timeout=1).sendall(b"stolen")
    return 1.0
