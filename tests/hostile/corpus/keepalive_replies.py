# expect: error
# message: wall-time limit (1 s) exceeded
# Sends an empty reply every 0.3 s so that a watchdog resetting on messages never fires.
import gc
import os
import time


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    until = time.monotonic() + 8
    while time.monotonic() < until:
        os.write(worker.out_fd, b'{"id":%d,"r":[]}\n' % worker.request_id)
        time.sleep(0.3)
    return 1.0
