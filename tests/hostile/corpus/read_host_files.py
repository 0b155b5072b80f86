# expect: error
# message: FileNotFoundError
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    with open(thread.metadata["host_file"]) as fh:
        return float(len(fh.read()))
