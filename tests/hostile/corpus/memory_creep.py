# expect: error
# message: memory limit (256 MB) exceeded
# timeout: 30
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    hoard = []
    while True:
        hoard.append(b"x" * 10_000_000)
    return 1.0
