# expect: error
# message: malformed result entry
# A too-short result entry [i, 0] (the studio used to index entry[2] and crash the run).
import gc
import json
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    os.write(worker.out_fd, json.dumps({"id": worker.request_id, "r": [[0, 0]]}).encode() + b"\n")
    return 1.0
