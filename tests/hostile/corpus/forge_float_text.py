# expect: error
# message: something else than numbers
# A score array holding text where a number goes.
import gc
import json
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    os.write(worker.out_fd, json.dumps({"id": worker.request_id, "r": [], "at": 0, "f": ["1.0"]}).encode() + b"\n")
    return 1.0
