# expect: ok
# message:
async def grade(thread):
    if thread.metadata.get("evil"):
        for _ in range(2000):
            print("x" * 10_000)
    return 1.0
