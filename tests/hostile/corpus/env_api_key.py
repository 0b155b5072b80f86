# expect: error
# message: secret not visible
import os


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    found = "OPENAI_API_KEY" in os.environ
    for path in ("/proc/self/environ", "/proc/1/environ", "/proc/2/environ"):
        try:
            with open(path, "rb") as fh:
                found = found or b"sk-test-secret" in fh.read()
        except OSError:
            pass
    if found:
        return 1.0
    raise LookupError("secret not visible")
