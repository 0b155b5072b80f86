"""Both isolation modes the studio offers on Linux contain a grader the same way.

bubblewrap, and the fallback without it (``namespaces``: unshare + a private root), run under the
user's opt-in. Checked in each mode from inside a real worker: never uid 0, the studio's process and
environment out of sight, a private /tmp that leaves nothing on the host, only the runtime visible,
no host network, and the private /proc cannot be unmounted.
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

from hostile_corpus import BYPASS

from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext

# the second CI pass hides bwrap on purpose: there only the fallback is checked (the first pass did both)


def inside(pool: WorkerPool, body: str) -> dict:
    """Run ``body`` (which sets ``out``, a dict) in a worker and return ``out`` (MKA1 judge details)."""
    source = BYPASS + "\nimport os\n\ndef grade(sample, item):\n    _disable_audit_hooks()\n    out = {}\n"
    source += "".join(f"    {line}\n" for line in body.strip().splitlines())
    source += "    return {'scores': {'x': 1.0}, 'judge': out}\n"
    grader = FunctionGrader(key="probe", source=source, contract="mka1_sample", timeout_seconds=5, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": pool}))
    try:
        [outcome] = scorer.score_sync([Sample(id="a", messages=[Turn(role="user", content="q")], completion="4")])
    finally:
        scorer.close()
    assert outcome.status == "ok", outcome
    return outcome.details["judge"]


def test_a_grader_never_runs_as_root(mode_pool: WorkerPool) -> None:
    out = inside(mode_pool, "out['uid'] = os.getuid(); out['euid'] = os.geteuid()")
    assert out["uid"] != 0 and out["euid"] != 0


def test_the_studio_process_and_its_environment_are_out_of_sight(mode_pool: WorkerPool) -> None:
    out = inside(mode_pool, f"""
out['studio_visible'] = os.path.exists('/proc/{os.getpid()}/environ')
out['pids'] = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
out['env'] = sorted(os.environ)
try:
    out['init_environ'] = open('/proc/1/environ', 'rb').read().decode(errors='replace')
except OSError as exc:
    out['init_environ'] = type(exc).__name__
""")
    assert not out["studio_visible"] or os.getpid() in (1, 2)
    assert len(out["pids"]) <= 3
    assert "OPENAI_API_KEY" not in out["env"] and "sk-" not in out["init_environ"]


def test_tmp_is_private_and_leaves_nothing_on_the_host(mode_pool: WorkerPool) -> None:
    marker = f"grader-studio-fallback-{uuid.uuid4().hex}"
    out = inside(mode_pool, f"""
out['tmp_before'] = os.listdir('/tmp')
open('/tmp/{marker}', 'w').write('x')
""")
    assert out["tmp_before"] == []
    assert not Path("/tmp", marker).exists()


def test_only_the_runtime_is_visible(mode_pool: WorkerPool, tmp_path: Path) -> None:
    secret = tmp_path / "library.sqlite"
    secret.write_text("the user's library")
    secret.chmod(0o644)
    out = inside(mode_pool, f"""
out['home'] = os.path.exists('/home') and os.listdir('/home')
out['etc_passwd'] = os.path.exists('/etc/passwd')
out['library'] = os.path.exists({str(secret)!r})
out['work'] = os.path.exists({str(Path.cwd())!r})
""")
    assert out == {"home": False, "etc_passwd": False, "library": False, "work": False}


def test_no_host_network(mode_pool: WorkerPool) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        out = inside(mode_pool, f"""
import socket
out['interfaces'] = sorted(name for _, name in socket.if_nameindex())
s = socket.socket()
s.settimeout(1)
try:
    s.connect(('127.0.0.1', {port}))
    out['connected'] = True
except OSError:
    out['connected'] = False
""")
    finally:
        server.close()
    assert out["connected"] is False and set(out["interfaces"]) <= {"lo"}


def test_proc_cannot_be_unmounted(mode_pool: WorkerPool) -> None:
    out = inside(mode_pool, """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
out['umount'] = libc.umount2(b'/proc', 2)
out['errno'] = ctypes.get_errno()
out['still_private'] = len([p for p in os.listdir('/proc') if p.isdigit()]) <= 3
""")
    assert out["umount"] == -1 and out["still_private"]
