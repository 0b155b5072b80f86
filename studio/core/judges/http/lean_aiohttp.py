"""aiohttp, imported without loading the system's CA store for contexts the studio never uses.

When it is imported, aiohttp builds two default TLS contexts (``aiohttp/connector.py``: one that
verifies, one that does not), and each loads the system's CA store: ~40 ms of CPU, a tenth of a
judge run's fixed cost before its first call (upstream keeps them at import by design,
aio-libs/aiohttp#9029). The studio never uses them: every connection that speaks TLS, to an https
endpoint or to an https proxy, gets the studio's own context (``tls.ssl_context``: certifi, or
SSL_CERT_FILE/SSL_CERT_DIR, plus the endpoint's CA bundle), and aiohttp's default stands only for a
connection without TLS (``transport``). So aiohttp is imported with ``set_default_verify_paths``
switched off for the import's length: its two contexts hold no CA, and a context without a CA
trusts no certificate: were one ever used, it would refuse a server, never accept one
(tests/core/judges/test_lean_aiohttp.py). The studio's own contexts load their stores with
``load_verify_locations``, which this never touches.
"""

from __future__ import annotations

import ssl
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()


@contextmanager
def _no_default_verify_paths() -> Iterator[None]:
    """``ssl.SSLContext.set_default_verify_paths`` does nothing inside (the import's length)."""
    own = "set_default_verify_paths" in vars(ssl.SSLContext)
    before = vars(ssl.SSLContext).get("set_default_verify_paths")

    def skipped(self: ssl.SSLContext) -> None:  # the system store left unloaded
        return None

    with _LOCK:
        setattr(ssl.SSLContext, "set_default_verify_paths", skipped)  # noqa: B010 (a method replaced)
        try:
            yield
        finally:  # the method as it was: ssl.SSLContext's own, else _ssl._SSLContext's again
            if own:
                setattr(ssl.SSLContext, "set_default_verify_paths", before)  # noqa: B010
            else:
                delattr(ssl.SSLContext, "set_default_verify_paths")


if "aiohttp" in sys.modules:  # imported already (another user of it came first): nothing to save
    import aiohttp
else:
    with _no_default_verify_paths():
        import aiohttp

from aiohttp.client_proto import ResponseHandler  # noqa: E402  (aiohttp itself is imported above)
from aiohttp.client_reqrep import ClientRequest, ConnectionKey  # noqa: E402
from aiohttp.connector import Connection  # noqa: E402
from aiohttp.tracing import Trace  # noqa: E402

__all__ = ["ClientRequest", "Connection", "ConnectionKey", "ResponseHandler", "Trace", "aiohttp"]
