# expect: invalid
# message: returned str
async def grade(thread):
    return "1.0" if thread.metadata.get("evil") else 1.0
