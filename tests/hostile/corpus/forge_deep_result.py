# expect: error
# message: nested too deeply
# Finds the worker through gc and writes a result 50,000 lists deep into the result channel
# (200,000 deep is refused by the message size cap before it is parsed).
import gc
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    head = b'{"id":%d,"r":[[0,0,' % worker.request_id
    os.write(worker.out_fd, head + b"[" * 50_000 + b"]" * 50_000 + b"]]}\n")
    return 1.0
