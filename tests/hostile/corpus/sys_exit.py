# expect: error
# message: sys.exit(3)
import sys


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    sys.exit(3)
