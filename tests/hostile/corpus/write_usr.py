# expect: error
# message: Read-only file system
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    with open("/usr/lib/grader-studio-pwned", "w") as fh:
        fh.write("x")
    return 1.0
