# expect: error
# message: Error
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    with open(thread.metadata["home"] + "/grader-studio-pwned", "w") as fh:
        fh.write("pwned")
    return 1.0
