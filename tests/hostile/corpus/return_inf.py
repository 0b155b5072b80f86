# expect: invalid
# message: non-finite
async def grade(thread):
    return float("inf") if thread.metadata.get("evil") else 1.0
