# expect: error
# message: two results for one sample
# One line that scores the batch's first sample twice, once as an entry and once in the score array
# (with a score it did not earn): the line is refused whole, nothing of it is kept.
import gc
import json
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    line = {"id": worker.request_id, "r": [[0, 0, 0.5]], "at": 0, "f": [0.5]}
    os.write(worker.out_fd, json.dumps(line).encode() + b"\n")
    return 1.0
