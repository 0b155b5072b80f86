# expect: invalid
# message: non-finite
import math

import adaptive_harmony

# lie to everything in reach: the shim and the stdlib checks
adaptive_harmony.StringThread.completion = lambda self: "the expected answer"
math.isfinite = lambda x: True


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    return float("nan")
