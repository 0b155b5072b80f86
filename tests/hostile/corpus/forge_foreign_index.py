# expect: error
# message: not in the batch
# A result for a sample index that belongs to no sample of the batch.
import gc
import json
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    os.write(worker.out_fd, json.dumps({"id": worker.request_id, "r": [[10**6, 0, 1.0]]}).encode() + b"\n")
    return 1.0
