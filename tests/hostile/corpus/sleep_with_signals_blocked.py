# expect: error
# message: wall-time limit (1 s) exceeded
import signal
import time


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    time.sleep(3600)
    return 1.0
