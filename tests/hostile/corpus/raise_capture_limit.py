# expect: ok
# message:
# Lifts the guest's capture of printed text; the studio keeps its own 4096 characters.
import sys


async def grade(thread):
    if thread.metadata.get("evil"):
        sys.modules["studio_guest.loop"].CAPTURE_BYTES = 10**9
        print("x" * 100_000)
    return 1.0
