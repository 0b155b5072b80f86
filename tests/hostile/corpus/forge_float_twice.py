# expect: error
# message: two results for one sample
# The same sample scored twice through the score array: two lines that each claim the batch's first sample.
import gc
import json
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    line = json.dumps({"id": worker.request_id, "r": [], "at": 0, "f": [0.5]}).encode() + b"\n"
    os.write(worker.out_fd, line + line)
    return 1.0
