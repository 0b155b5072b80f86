# expect: error
# message: No module named 'numpy'
async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    import numpy

    return float(numpy.float64(1.0))
