# expect: error
# message: SIGSEGV
import sys


def dive(n):
    # through a C builtin, so every level costs C stack (pure-Python calls do not since 3.11)
    return list(map(dive, [n + 1]))


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    sys.setrecursionlimit(10 ** 8)
    return float(dive(0))
