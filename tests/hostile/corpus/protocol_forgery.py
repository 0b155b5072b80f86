# expect: error
# message: sandbox channel
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    for fd in range(3, 32):
        try:
            os.write(fd, b"not json at all\n")
        except OSError:
            pass
    return 1.0
