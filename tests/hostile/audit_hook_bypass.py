# Prepended by test_hostile_graders.py to the corpus graders marked "# needs: audit-hook bypass":
# the documented two-line bypass of in-process defences, so that only the OS stands in the way.
import gc
import types


def _disable_audit_hooks():
    """The documented bypass of in-process defences: neuter the audit hook found via gc."""
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == "hook" and "sandbox" in repr(obj.__code__.co_consts):
            obj.__code__ = (lambda event, args: None).__code__
