# expect: error
# message: FileNotFoundError
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    keys = os.listdir(thread.metadata["home"] + "/.ssh") if os.path.isdir(thread.metadata["home"] + "/.ssh") else []
    with open("/etc/shadow") as fh:
        return float(len(fh.read()) + len(keys))
