"""aiohttp is imported without loading the system's CA store into its two default TLS contexts
(studio/core/judges/http/lean_aiohttp.py: ~40 ms of a judge run's start-up): they hold no CA, so
were one ever used it would refuse every server, never trust one; the studio's own contexts and any
context made after the import load their stores as before. Each check in a fresh interpreter: which
module imports aiohttp first is a process-wide fact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from net_servers import JudgeLog, ThreadServer, make_ca, naming_judge

CHILD = r"""
import asyncio, json, ssl, sys
before = ssl.create_default_context().cert_store_stats()["x509_ca"]
from studio.core.judges.http import transport  # imports aiohttp (lean_aiohttp)
import aiohttp, aiohttp.connector as connector
out = {
    "defaults": [connector._SSL_CONTEXT_VERIFIED.cert_store_stats()["x509_ca"],
                 connector._SSL_CONTEXT_UNVERIFIED.cert_store_stats()["x509_ca"]],
    "before": before,
    "after": ssl.create_default_context().cert_store_stats()["x509_ca"],
    "restored": "set_default_verify_paths" not in vars(ssl.SSLContext),
}
url, ca = sys.argv[1], sys.argv[2]

async def fetch(ssl_arg):
    async with aiohttp.ClientSession() as session:
        try:
            async with session.get(url, ssl=ssl_arg) as response:
                return f"HTTP {response.status}"
        except aiohttp.ClientConnectorCertificateError:
            return "refused"

trusting = ssl.create_default_context(cafile=ca)
out["default"] = asyncio.run(fetch(True))  # aiohttp's own default context
out["studio"] = asyncio.run(fetch(transport.ssl_context(ca)))
out["trusting"] = asyncio.run(fetch(trusting))
print(json.dumps(out))
"""


def test_aiohttps_default_contexts_hold_no_ca_and_every_other_context_is_as_before(tmp_path: Path) -> None:
    ca = make_ca(tmp_path / "ca", "127.0.0.1")
    with ThreadServer(naming_judge(JudgeLog()), tls=ca.server_context()) as judge:
        done = subprocess.run([sys.executable, "-c", CHILD, f"https://127.0.0.1:{judge.port}/v1/models",
                               str(ca.ca_pem)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["defaults"] == [0, 0]  # the system store was not loaded into aiohttp's two contexts
    assert out["restored"] and out["after"] == out["before"]  # nor left unloadable after the import
    # aiohttp's default trusts no server (it would refuse, never accept); the studio's context and
    # any other that names the CA reach the same server
    assert out["default"] == "refused"
    assert out["studio"].startswith("HTTP ") and out["trusting"].startswith("HTTP ")
