# expect: error
# message: Errno
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    with open("/tmp/big", "wb") as fh:
        for _ in range(200):
            fh.write(b"x" * 1_000_000)
    return 1.0
