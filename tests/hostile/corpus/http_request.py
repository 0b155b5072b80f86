# expect: error
# message: URLError
# needs: audit-hook bypass

import urllib.request


async def grade(thread):
    if not thread.metadata.get("evil"):
        return 1.0
    _disable_audit_hooks()
    urllib.request.urlopen("http://pypi.org/simple/", timeout=2).read()
    return 1.0
