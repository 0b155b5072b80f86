"""A Ray the studio starts (``run --executor ray`` without ``--ray-address``) listens on 127.0.0.1
only: Ray has no authentication, and a GCS server, raylet, agent or worker bound to 0.0.0.0 / ::
lets anyone on the network run code as the user. Checked on the sockets the started processes
really listen on (/proc/net/tcp and tcp6, matched to the processes' socket inodes), not on Ray's
settings."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

PROBE = textwrap.dedent("""
    import ipaddress, json, os, socket, struct
    import ray
    from studio.core.engine.executors.ray_driver import RayExecutor

    def descendants(root):
        children = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = open(f"/proc/{entry}/stat").read()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
        found, todo = [], [root]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def name(pid):
        try:
            return open(f"/proc/{pid}/comm").read().strip()
        except OSError:
            return "?"

    def socket_inodes(pid):
        inodes = {}
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except OSError:
            pass
        return inodes

    def address(hex_ip):
        raw = bytes.fromhex(hex_ip)
        words = b"".join(struct.pack("<I", struct.unpack(">I", raw[i:i + 4])[0]) for i in range(0, len(raw), 4))
        return str(ipaddress.ip_address(words))

    def listening(pids):
        inodes = {}
        for pid in pids:
            inodes.update(socket_inodes(pid))
        out = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in open(table).read().splitlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # 0A: LISTEN
                    ip, port = local.split(":")
                    out.append((address(ip), int(port, 16), name(inodes[inode])))
        return out

    executor = RayExecutor()
    where = executor.connect()

    @ray.remote
    def ping():
        return os.getpid()

    @ray.remote
    def library_env():
        return [os.environ.get(k) for k in ("GRADER_STUDIO_DB", "PGPASSWORD")]

    ray.get([ping.remote() for _ in range(2)])  # workers start and open their own ports
    worker_env = ray.get(library_env.remote())
    pids = descendants(os.getpid())
    secrets_seen = []
    for pid in pids:
        if pid == os.getpid():  # the run child itself holds the library's URL: its Ray must not
            continue
        try:
            if b"s3cret" in open(f"/proc/{pid}/environ", "rb").read():
                secrets_seen.append(name(pid))
        except OSError:
            pass
    found = listening(pids)
    nodes = [n["NodeManagerAddress"] for n in ray.nodes()]
    names = sorted({name(pid) for pid in pids})
    ray.shutdown()
    print(json.dumps({"where": where, "listening": found, "nodes": nodes, "names": names,
                      "env": os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"), "worker_env": worker_env,
                      "secrets_seen": secrets_seen,
                      "host_env": [os.environ.get(k) for k in ("GRADER_STUDIO_DB", "PGPASSWORD")]}))
""")



def loopback(text: str) -> bool:
    ip = ipaddress.ip_address(text)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def test_a_local_ray_binds_loopback_only() -> None:
    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("reads Linux's /proc/net/tcp: the studio starts a local Ray on Linux")
    try:
        import ray  # noqa: F401
    except ImportError:
        message = "Ray is not installed: pip install -e '.[test,ray]' (the Ray executor's tests need it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")}
    # a run child on a team library holds the library's URL (and maybe PGPASSWORD): issue 44 says no
    # child process's environment shows the password, and a Ray the studio starts is one
    env.update(GRADER_STUDIO_DB="postgresql://ana:s3cret-pw@127.0.0.1:1/lib", PGPASSWORD="pg-s3cret")
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"gcs_server", "raylet"} <= set(report["names"]), report["names"]  # the probe saw Ray's processes
    assert report["listening"], "no listening socket found: the probe cannot see Ray's processes"
    exposed = [entry for entry in report["listening"] if not loopback(entry[0])]
    assert exposed == [], f"Ray processes listen beyond the loopback address: {exposed}"
    assert report["nodes"] == ["127.0.0.1"]
    assert report["env"] is None  # the host process's environment is restored after the start
    assert report["worker_env"] == [None, None] and report["secrets_seen"] == [], report
    assert report["host_env"] == ["postgresql://ana:s3cret-pw@127.0.0.1:1/lib", "pg-s3cret"]  # restored too
