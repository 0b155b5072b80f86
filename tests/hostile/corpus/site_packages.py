# expect: error
# message: No module named
import sys


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    # the runtime's own site-packages, and Debian's, are on disk: put them back on the path
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    sys.path += [f"{sys.base_prefix}/lib/{version}/site-packages", "/usr/lib/python3/dist-packages",
                 f"/usr/local/lib/{version}/dist-packages"]
    import pytest  # noqa: F401 - installed in the runtime the studio uses, never in the sandbox

    return 1.0
