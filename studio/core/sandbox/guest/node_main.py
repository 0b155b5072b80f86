"""Entry point of a Node worker: ``python -I -S node_main.py CONFIG_JSON``, then exec node.

Node cannot lock itself down, so this launcher does it and then replaces itself with node: the
channel to the studio moves to fd 3 (fd 1 and 2 become /dev/null, so a grader's prints cannot
reach it), root is dropped, no_new_privs is set, the rlimits are put on with hard == soft, and the
Node seccomp policy (studio_guest.node_confine: the Python worker's refusals with threads allowed)
is installed last; the only execve it lets through is this one, of node itself. Where the kernel
has Landlock, writes are confined to the private working directory (/tmp) and /dev/null and execution to the system's program
directories: node is dumpable after the exec, and must not write its own /proc/self/mem.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE]
sys.dont_write_bytecode = True

from studio_guest import confine, node_confine  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:  # never at run time: the guest has only the standard library
    from studio.core.json_types import JsonObject


def _fail(message: str) -> None:
    os.write(3, (json.dumps({"op": "ready", "error": message}) + "\n").encode())
    os._exit(1)


def main(config: JsonObject) -> None:
    os.dup2(1, 3)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None and gid is not None:
        confine.drop_privileges(int(uid), int(gid))
    if sys.platform == "linux" and not confine.set_no_new_privs_and_nondumpable():
        _fail("no_new_privs could not be set")
    confine.set_limit("RLIMIT_AS", config.get("as_bytes"))
    confine.set_limit("RLIMIT_CPU", config.get("cpu_seconds"))
    confine.set_limit("RLIMIT_NPROC", config.get("nproc"))
    confine.set_limit("RLIMIT_FSIZE", config.get("fsize"))
    confine.set_limit("RLIMIT_CORE", 0)
    confine.set_limit("RLIMIT_NOFILE", 256)
    node = str(config["node"])
    argv = [node, *config.get("node_args", []), os.path.join(_HERE, "js", "harness.js")]
    landlocked = False
    if config.get("landlock", True) and sys.platform == "linux":
        executable = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", os.path.dirname(os.path.dirname(node))]
        landlocked = node_confine.landlock([os.getcwd()], ["/dev/null"], executable)
    # the working directory is the worker's private /tmp (bubblewrap, namespaces) or its own temp dir
    variables = {**(config.get("env") or {}), "HOME": os.getcwd(), "TMPDIR": os.getcwd()}
    env = [f"{k}={v}" for k, v in variables.items()] + [f"STUDIO_LANDLOCK={int(landlocked)}"]
    path = ctypes.create_string_buffer(node.encode())
    c_argv = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
    c_env = (ctypes.c_char_p * (len(env) + 1))(*[e.encode() for e in env], None)
    if config.get("seccomp", True) and sys.platform == "linux" and not node_confine.install(ctypes.addressof(path)):
        _fail("the seccomp filter could not be installed")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.execve(path, c_argv, c_env)
    _fail(f"node could not start: {os.strerror(ctypes.get_errno())}")


main(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
