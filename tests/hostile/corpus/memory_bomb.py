# expect: error
# message: memory limit (256 MB) exceeded
# timeout: 30
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    return float(len(bytearray(8 * 1024 ** 3)))
