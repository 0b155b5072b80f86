# expect: invalid
# message: returned a bool
async def grade(thread):
    return True if thread.metadata.get("evil") else 1.0
