# expect: error
# message: not allowed
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    os.system("touch /tmp/pwned")
    return 1.0
