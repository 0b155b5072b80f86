# expect: error
# message: Operation not permitted
import gc
import types


def _disable_audit_hooks():
    """The documented bypass of in-process defences: neuter the audit hook found via gc."""
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == "hook" and "sandbox" in repr(obj.__code__.co_consts):
            obj.__code__ = (lambda event, args: None).__code__

import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    os.posix_spawn("/bin/sh", ["sh", "-c", "true"], {})
    return 1.0
