# expect: error
# message: RecursionError
def dive(n):
    return dive(n + 1) + 1


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    return float(dive(0))
