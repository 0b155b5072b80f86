"""Self-report of a fresh worker: what it can see and do, measured from inside (sandbox-info)."""

from __future__ import annotations

import os
import socket

from . import confine

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep typing out of the worker's start-up
    from studio.core.json_types import JsonObject



def _visible(path: str) -> bool:
    try:
        os.listdir(path)
        return True
    except OSError:
        return False


def _loopback_refused() -> bool:
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return True
    try:
        sock.settimeout(0.5)
        sock.connect(("127.0.0.1", 9))
    except PermissionError:
        return True  # refused by the audit hook only: not counted as OS isolation below
    except OSError as exc:
        return exc.errno in (101, 111, 113, 99)  # ENETUNREACH, ECONNREFUSED, EHOSTUNREACH, EADDRNOTAVAIL
    finally:
        sock.close()
    return False


def _interfaces() -> list[str]:
    try:
        return [name for _, name in socket.if_nameindex()]
    except OSError:
        return []


def report() -> JsonObject:
    pids = [p for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []
    writable_root = os.access("/", os.W_OK)
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "seccomp": confine.status_field("Seccomp"),
        "no_new_privs": confine.status_field("NoNewPrivs"),
        "env_keys": sorted(os.environ),
        "interfaces": _interfaces(),
        "loopback_refused": _loopback_refused(),
        "home_visible": _visible("/home") or _visible("/root/.ssh"),
        "etc_visible": os.path.exists("/etc/passwd"),
        "visible_pids": len(pids),
        "root_writable": writable_root,
        "tmp_writable": os.access("/tmp", os.W_OK),
    }
