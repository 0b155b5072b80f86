# expect: error
# message: exited with code 7
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    os._exit(7)
