# expect: error
# message: wall-time limit (1 s) exceeded
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    while True:
        pass
